# The free heap counted in C (heap.c: the module pitboss_heap), linked into the pitboss
# image as a user C module.
add_library(usermod_pitboss_heap INTERFACE)
target_sources(usermod_pitboss_heap INTERFACE ${CMAKE_CURRENT_LIST_DIR}/heap.c)
target_link_libraries(usermod INTERFACE usermod_pitboss_heap)
