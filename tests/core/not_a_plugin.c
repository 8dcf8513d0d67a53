/* A shared object without the plugin entry symbol: the loader must refuse it by name. */
int rocmforge_test_not_a_plugin(void) { return 42; }
