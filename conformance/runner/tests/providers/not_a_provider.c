/* A shared library that is not a provider: it exports none of the three entry points
 * (ndkct/provider.h). The runner must refuse it with a message naming the missing one. */
__attribute__((visibility("default"))) int ndkct_not_a_provider(void) {
    return 42;
}
