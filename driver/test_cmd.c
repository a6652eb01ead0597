/* test_cmd.c: stub */
#include "driver.h"
int drv_test_main(int argc, char **argv) { (void)argc; (void)argv; return 1; }
