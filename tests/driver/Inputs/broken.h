/* broken.h: forces a C compiler error (tests/driver/build_errors.test). */
#error broken on purpose
