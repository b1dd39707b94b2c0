# The USB serial input in C (cdc_rx.c: the receive callback in bulk and the module
# pitboss_cdc), linked into the pitboss image as a user C module.
add_library(usermod_pitboss_cdc_rx INTERFACE)
target_sources(usermod_pitboss_cdc_rx INTERFACE ${CMAKE_CURRENT_LIST_DIR}/cdc_rx.c)
target_link_libraries(usermod INTERFACE usermod_pitboss_cdc_rx)
