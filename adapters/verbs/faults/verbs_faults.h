/*
 * libndkct_verbs_faults.so: makes chosen libibverbs / librdmacm calls fail, and counts the device
 * objects each device context and event channel holds (README.md in this folder).
 *
 * Load it with LD_PRELOAD in front of any program that uses libibverbs (the verbs provider, the
 * conformance suite, rdma-core's own tools). Arm faults either with the environment at load time
 *
 *   NDKCT_VERBS_FAULTS="ibv_create_qp:3:ENOMEM,ibv_post_send:1:EAGAIN:2"
 *
 * (function:N:errno[:count]: calls N .. N+count-1 of the function, counted from the start, fail
 * with errno; count defaults to 1), or from the program through the functions below (found with
 * dlsym(RTLD_DEFAULT, ...) so that a test runs with and without the interposer).
 *
 * Every injected failure and every leak is reported on stderr as one line starting with
 * "ndkct-verbs-faults: ". NDKCT_VERBS_FAULTS_QUIET=1 silences the injections (not the leaks).
 */
#ifndef NDKCT_VERBS_FAULTS_H
#define NDKCT_VERBS_FAULTS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Fails calls nth .. nth+count-1 of `function`, counted from this call on (nth >= 1), with
 * `error` (an errno value). Returns 0, or -1 when the function is not one the interposer
 * knows. nth 0 disarms the function. */
int ndkct_verbs_fault_arm(const char* function, unsigned long nth, int error, unsigned long count);
/* Disarms every function. */
void ndkct_verbs_fault_disarm_all(void);
/* How often `function` was called since the process started (injected failures included). */
unsigned long ndkct_verbs_fault_calls(const char* function);
/* How many failures were injected so far, over every function. */
unsigned long ndkct_verbs_fault_fired(void);
/* Device objects (PD, CQ, QP, SRQ, MR, MW, completion channel) still open over every device
 * context, and rdma_cm ids over every event channel: what a provider that closed everything
 * it opened has at zero. */
unsigned long ndkct_verbs_fault_live_objects(void);
/* Contexts closed and event channels destroyed while objects of theirs were still open. */
unsigned long ndkct_verbs_fault_leaks(void);
/* The interposed functions, one name per line ("ibv_create_qp\n..."): a static string. */
const char* ndkct_verbs_fault_functions(void);

#ifdef __cplusplus
}
#endif

#endif
