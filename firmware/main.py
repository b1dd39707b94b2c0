import pitboss.run  # noqa: F401  (the table controller: pitboss/app.py)
