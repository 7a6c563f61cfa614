/* The stand-in liburing's one function. */
int fake_liburing_linked(void);
