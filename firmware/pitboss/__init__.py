# pitboss firmware package: the same modules run on the board and on the host.
