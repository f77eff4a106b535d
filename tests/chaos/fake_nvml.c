/* Minimal crash fakes of libnvidia-ml.so.1 for compat's chaos tests (issue 19, item 1). Not a real NVML: each
 * build (-DFAKE_SEGV, -DFAKE_ABORT, -DFAKE_HANG, -DFAKE_GARBAGE) fails in one way. A profile-driven fake of the
 * whole library lives elsewhere (tests/fake_nvml/); these only crash, hang or lie. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

#ifdef FAKE_ABORT
__attribute__((constructor)) static void explode_on_load(void) { abort(); }
#endif

int nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
#ifdef FAKE_SEGV
    volatile int *p = (int *)0;
    *p = 42;
#endif
#ifdef FAKE_HANG
    for (;;) pause();
#endif
    return 0;
}
int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { (void)r; return "fake error"; }

static const char GARBAGE[] = "\x1b]0;pwned\x07\x1b[2J\xff\xfe 535.\x1b[31m";

int nvmlSystemGetDriverVersion(char *buf, unsigned int len) {
    if (len == 0) return 1;
    strncpy(buf, GARBAGE, len - 1);
    buf[len - 1] = 0;
    return 0;
}
int nvmlSystemGetCudaDriverVersion(int *v) { *v = -7; return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = -7; return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h) { *h = (nvmlDevice_t)(unsigned long)(i + 1); return 0; }
int nvmlDeviceGetName(nvmlDevice_t h, char *buf, unsigned int len) {
    (void)h;
    if (len == 0) return 1;
    strncpy(buf, GARBAGE, len - 1);
    buf[len - 1] = 0;
    return 0;
}
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor) {
    (void)h; *major = -3; *minor = 999; return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *m) {
    (void)h; m->total = 1; m->free = ~0ULL; m->used = ~0ULL; return 0;
}
