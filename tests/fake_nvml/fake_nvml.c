/* A fake libnvidia-ml.so.1 for tests: answers the NVML calls compat makes from a profile recorded on a real GPU.
 *
 * The real nvidia-ml-py (module pynvml) loads it with dlopen("libnvidia-ml.so.1") when its directory is first on
 * LD_LIBRARY_PATH, so every ctypes signature, versioned struct and _v2/_v3 symbol pynvml uses is exercised for real.
 * Built by tests/fake_nvml/build.py with the system C compiler; a linker version script leaves out the symbols an
 * old driver lacks, so pynvml sees NVML_ERROR_FUNCTION_NOT_FOUND exactly as on such a driver.
 *
 * The profile (env FAKE_NVML_PROFILE) is the flat form tests/fake_nvml/profile.py writes from a JSON profile, one
 * record a line, tokens separated by one space:
 *   init RC                      nvmlInit*'s return code
 *   v DEV KEY RC T VALUES...     a call's answer: DEV -1 for system calls; KEY "fn" or "fn:arg:arg"; RC its return
 *                                code; T 's' (VALUES: one hex token, '-' for empty), 'i' (decimal integers) or 'n'
 *   lost_after DEV N             after N calls on device DEV (-1: any device) every device call is GPU_IS_LOST
 *   hang FN / crash FN           FN never returns / raises SIGSEGV
 *   xid DEV XID                  an Xid critical-error event queued for nvmlEventSetWait
 * A call without a record answers NVML_ERROR_NOT_SUPPORTED. FAKE_NVML_TRACE names a file that gets one line per call.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long ull;
typedef int nvmlReturn_t;

enum {
    OK = 0,
    E_UNINITIALIZED = 1,
    E_INVALID_ARGUMENT = 2,
    E_NOT_SUPPORTED = 3,
    E_INSUFFICIENT_SIZE = 7,
    E_TIMEOUT = 10,
    E_GPU_IS_LOST = 15,
    E_ARGUMENT_VERSION_MISMATCH = 25,
    E_UNKNOWN = 999
};

#define MAX_DEV 64
#define MAX_NAMES 64
#define MAX_XID 256

typedef struct {
    int dev;
    char key[96];
    int rc;
    char type;
    int n;
    ull *v;
    unsigned char *s;
    size_t slen;
} entry_t;

struct nvmlDevice_st {
    int index;
};
typedef struct nvmlDevice_st *nvmlDevice_t;

static struct nvmlDevice_st devices[MAX_DEV];
static entry_t *entries;
static int n_entries;
static int loaded;
static int init_rc;
static long lost_after[MAX_DEV + 1]; /* [MAX_DEV]: any device */
static long calls[MAX_DEV];
static char hang_fns[MAX_NAMES][64];
static int n_hang;
static char crash_fns[MAX_NAMES][64];
static int n_crash;
static int xid_dev[MAX_XID];
static ull xid_val[MAX_XID];
static int n_xid, xid_next;
static ull registered[MAX_DEV];

static void trace(const char *fn) {
    const char *path = getenv("FAKE_NVML_TRACE");
    if (path == NULL || *path == '\0') return;
    FILE *f = fopen(path, "a");
    if (f == NULL) return;
    fprintf(f, "%s\n", fn);
    fclose(f);
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static ull parse_int(const char *tok) {
    if (tok[0] == '-') return (ull)strtoll(tok, NULL, 10);
    return strtoull(tok, NULL, 10);
}

static void load_profile(void) {
    if (loaded) return;
    loaded = 1;
    for (int i = 0; i <= MAX_DEV; i++) lost_after[i] = -1;
    for (int i = 0; i < MAX_DEV; i++) devices[i].index = i;
    const char *path = getenv("FAKE_NVML_PROFILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (f == NULL) {
        fprintf(stderr, "fake NVML: cannot read FAKE_NVML_PROFILE=%s\n", path ? path : "(unset)");
        init_rc = E_UNKNOWN;
        return;
    }
    size_t cap = 64;
    entries = calloc(cap, sizeof(entry_t));
    char *line = NULL;
    size_t len = 0;
    while (getline(&line, &len, f) != -1) {
        line[strcspn(line, "\r\n")] = '\0';
        char *save = NULL;
        char *tok = strtok_r(line, " ", &save);
        if (tok == NULL || tok[0] == '#') continue;
        if (strcmp(tok, "init") == 0) {
            char *rc = strtok_r(NULL, " ", &save);
            init_rc = rc ? atoi(rc) : 0;
        } else if (strcmp(tok, "lost_after") == 0) {
            char *d = strtok_r(NULL, " ", &save), *n = strtok_r(NULL, " ", &save);
            if (d && n) {
                int dev = atoi(d);
                lost_after[dev < 0 || dev >= MAX_DEV ? MAX_DEV : dev] = atol(n);
            }
        } else if (strcmp(tok, "hang") == 0 || strcmp(tok, "crash") == 0) {
            char *fn = strtok_r(NULL, " ", &save);
            int hang = tok[0] == 'h';
            if (fn && (hang ? n_hang : n_crash) < MAX_NAMES) {
                char *dst = hang ? hang_fns[n_hang++] : crash_fns[n_crash++];
                snprintf(dst, 64, "%s", fn);
            }
        } else if (strcmp(tok, "xid") == 0) {
            char *d = strtok_r(NULL, " ", &save), *x = strtok_r(NULL, " ", &save);
            if (d && x && n_xid < MAX_XID) {
                xid_dev[n_xid] = atoi(d);
                xid_val[n_xid++] = parse_int(x);
            }
        } else if (strcmp(tok, "v") == 0) {
            char *d = strtok_r(NULL, " ", &save), *key = strtok_r(NULL, " ", &save);
            char *rc = strtok_r(NULL, " ", &save), *type = strtok_r(NULL, " ", &save);
            if (!d || !key || !rc || !type) continue;
            if (n_entries == (int)cap) {
                cap *= 2;
                entries = realloc(entries, cap * sizeof(entry_t));
            }
            entry_t *e = &entries[n_entries++];
            memset(e, 0, sizeof(*e));
            e->dev = atoi(d);
            snprintf(e->key, sizeof(e->key), "%s", key);
            e->rc = atoi(rc);
            e->type = type[0];
            if (e->type == 's') {
                char *hex = strtok_r(NULL, " ", &save);
                size_t h = (hex && strcmp(hex, "-") != 0) ? strlen(hex) / 2 : 0;
                e->s = calloc(h + 1, 1);
                for (size_t i = 0; i < h; i++) e->s[i] = (unsigned char)(hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]));
                e->slen = h;
            } else if (e->type == 'i') {
                int vcap = 8;
                e->v = calloc((size_t)vcap, sizeof(ull));
                char *t;
                while ((t = strtok_r(NULL, " ", &save)) != NULL) {
                    if (e->n == vcap) {
                        vcap *= 2;
                        e->v = realloc(e->v, (size_t)vcap * sizeof(ull));
                    }
                    e->v[e->n++] = parse_int(t);
                }
            }
        }
    }
    free(line);
    fclose(f);
}

static const entry_t *find(int dev, const char *key) {
    for (int i = 0; i < n_entries; i++)
        if (entries[i].dev == dev && strcmp(entries[i].key, key) == 0) return &entries[i];
    return NULL;
}

static int in_list(char list[][64], int n, const char *fn) {
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], fn) == 0) return 1;
    return 0;
}

/* Every exported call starts here: trace, the injected hang or crash, and the lost-GPU countdown. */
static nvmlReturn_t enter(const char *fn, int dev) {
    load_profile();
    trace(fn);
    if (in_list(crash_fns, n_crash, fn)) raise(SIGSEGV);
    if (in_list(hang_fns, n_hang, fn))
        for (;;) pause();
    if (dev >= 0 && dev < MAX_DEV) {
        calls[dev]++;
        long limit = lost_after[dev] >= 0 ? lost_after[dev] : lost_after[MAX_DEV];
        if (limit >= 0 && calls[dev] > limit) return E_GPU_IS_LOST;
    }
    return OK;
}

static int device_count(void) {
    const entry_t *e = find(-1, "nvmlDeviceGetCount_v2");
    if (e && e->rc == OK && e->type == 'i' && e->n > 0) return (int)e->v[0];
    int n = 0;
    for (int i = 0; i < n_entries; i++)
        if (entries[i].dev >= n) n = entries[i].dev + 1;
    return n > MAX_DEV ? MAX_DEV : n;
}

static int dev_index(nvmlDevice_t d) {
    if (d == NULL || d < devices || d >= devices + MAX_DEV) return -1;
    return d->index;
}

/* The answer for (dev, key): its record, or NOT_SUPPORTED; `fallback` is a second key (an older function name). */
static const entry_t *answer(int dev, const char *key, const char *fallback, nvmlReturn_t *rc) {
    const entry_t *e = find(dev, key);
    if (e == NULL && fallback) e = find(dev, fallback);
    *rc = e ? e->rc : E_NOT_SUPPORTED;
    return e;
}

static nvmlReturn_t copy_string(const entry_t *e, char *buf, unsigned int size) {
    if (buf == NULL) return E_INVALID_ARGUMENT;
    if (e->slen + 1 > size) return E_INSUFFICIENT_SIZE;
    memcpy(buf, e->s, e->slen);
    buf[e->slen] = '\0';
    return OK;
}

static ull ival(const entry_t *e, int i) { return (e && e->type == 'i' && i < e->n) ? e->v[i] : 0; }

/* ------------------------------------------------------------------ init, errors */

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    nvmlReturn_t rc = enter("nvmlInitWithFlags", -1);
    return rc != OK ? rc : init_rc;
}
nvmlReturn_t nvmlInit_v2(void) {
    nvmlReturn_t rc = enter("nvmlInit_v2", -1);
    return rc != OK ? rc : init_rc;
}
nvmlReturn_t nvmlInit(void) {
    nvmlReturn_t rc = enter("nvmlInit", -1);
    return rc != OK ? rc : init_rc;
}
nvmlReturn_t nvmlShutdown(void) {
    trace("nvmlShutdown");
    return OK;
}

const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
        case 0: return "Success";
        case 1: return "Uninitialized";
        case 2: return "Invalid Argument";
        case 3: return "Not Supported";
        case 4: return "Insufficient Permissions";
        case 6: return "Not Found";
        case 7: return "Insufficient Size";
        case 9: return "Driver Not Loaded";
        case 10: return "Timeout";
        case 12: return "NVML Shared Library Not Found";
        case 13: return "Function Not Found";
        case 15: return "GPU is lost";
        case 16: return "GPU requires restart";
        case 18: return "RM has detected an NVML/RM version mismatch.";
        case 25: return "Argument version mismatch";
        default: return "Unknown Error";
    }
}

/* ------------------------------------------------------------------ system */

static nvmlReturn_t sys_string(const char *fn, char *buf, unsigned int size) {
    nvmlReturn_t rc = enter(fn, -1);
    if (rc != OK) return rc;
    const entry_t *e = answer(-1, fn, NULL, &rc);
    return rc != OK ? rc : copy_string(e, buf, size);
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n) { return sys_string("nvmlSystemGetDriverVersion", v, n); }
nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int n) { return sys_string("nvmlSystemGetNVMLVersion", v, n); }

static nvmlReturn_t cuda_version(const char *fn, int *v) {
    nvmlReturn_t rc = enter(fn, -1);
    if (rc != OK) return rc;
    const entry_t *e = answer(-1, "nvmlSystemGetCudaDriverVersion", NULL, &rc);
    if (rc == OK) *v = (int)ival(e, 0);
    return rc;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return cuda_version("nvmlSystemGetCudaDriverVersion", v); }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return cuda_version("nvmlSystemGetCudaDriverVersion_v2", v); }

static nvmlReturn_t get_count(const char *fn, unsigned int *count) {
    nvmlReturn_t rc = enter(fn, -1);
    if (rc != OK) return rc;
    const entry_t *e = find(-1, "nvmlDeviceGetCount_v2");
    if (e && e->rc != OK) return e->rc;
    *count = (unsigned int)device_count();
    return OK;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *c) { return get_count("nvmlDeviceGetCount_v2", c); }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *c) { return get_count("nvmlDeviceGetCount", c); }

static nvmlReturn_t get_handle(const char *fn, unsigned int index, nvmlDevice_t *device) {
    nvmlReturn_t rc = enter(fn, (int)index);
    if (rc != OK) return rc;
    if ((int)index >= device_count()) return E_INVALID_ARGUMENT;
    const entry_t *e = find((int)index, "nvmlDeviceGetHandleByIndex_v2");
    if (e && e->rc != OK) return e->rc;
    *device = &devices[index];
    return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { return get_handle("nvmlDeviceGetHandleByIndex_v2", i, d); }
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return get_handle("nvmlDeviceGetHandleByIndex", i, d); }

/* ------------------------------------------------------------------ devices */

#define DEV_ENTER(fn)                          \
    int dev = dev_index(device);               \
    if (dev < 0) return E_INVALID_ARGUMENT;    \
    nvmlReturn_t rc = enter(fn, dev);          \
    if (rc != OK) return rc

static nvmlReturn_t dev_string(const char *fn, nvmlDevice_t device, char *buf, unsigned int size) {
    DEV_ENTER(fn);
    const entry_t *e = answer(dev, fn, NULL, &rc);
    return rc != OK ? rc : copy_string(e, buf, size);
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *b, unsigned int n) { return dev_string("nvmlDeviceGetName", d, b, n); }
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *b, unsigned int n) { return dev_string("nvmlDeviceGetUUID", d, b, n); }
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *b, unsigned int n) { return dev_string("nvmlDeviceGetSerial", d, b, n); }

/* One unsigned (or enum) out-parameter. */
static nvmlReturn_t dev_uint(const char *fn, const char *key, const char *fallback, nvmlDevice_t device, unsigned int *out) {
    DEV_ENTER(fn);
    const entry_t *e = answer(dev, key, fallback, &rc);
    if (rc == OK) *out = (unsigned int)ival(e, 0);
    return rc;
}
#define UINT_FN(name) \
    nvmlReturn_t name(nvmlDevice_t d, unsigned int *v) { return dev_uint(#name, #name, NULL, d, v); }
UINT_FN(nvmlDeviceGetPersistenceMode)
UINT_FN(nvmlDeviceGetPowerUsage)
UINT_FN(nvmlDeviceGetEnforcedPowerLimit)
UINT_FN(nvmlDeviceGetPowerManagementDefaultLimit)
UINT_FN(nvmlDeviceGetRetiredPagesPendingStatus)
UINT_FN(nvmlDeviceGetCurrPcieLinkGeneration)
UINT_FN(nvmlDeviceGetMaxPcieLinkGeneration)
UINT_FN(nvmlDeviceGetCurrPcieLinkWidth)
UINT_FN(nvmlDeviceGetMaxPcieLinkWidth)

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *t) {
    char key[96];
    snprintf(key, sizeof key, "nvmlDeviceGetTemperature:%d", sensor);
    return dev_uint("nvmlDeviceGetTemperature", key, NULL, device, t);
}
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int which, unsigned int *t) {
    char key[96];
    snprintf(key, sizeof key, "nvmlDeviceGetTemperatureThreshold:%d", which);
    return dev_uint("nvmlDeviceGetTemperatureThreshold", key, NULL, device, t);
}

static nvmlReturn_t dev_ull(const char *fn, const char *key, const char *fallback, nvmlDevice_t device, ull *out) {
    DEV_ENTER(fn);
    const entry_t *e = answer(dev, key, fallback, &rc);
    if (rc == OK) *out = ival(e, 0);
    return rc;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, ull *r) {
    return dev_ull("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksEventReasons",
                   "nvmlDeviceGetCurrentClocksThrottleReasons", d, r);
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, ull *r) {
    return dev_ull("nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
                   "nvmlDeviceGetCurrentClocksEventReasons", d, r);
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int type, int counter, ull *count) {
    char key[96];
    snprintf(key, sizeof key, "nvmlDeviceGetTotalEccErrors:%d:%d", type, counter);
    return dev_ull("nvmlDeviceGetTotalEccErrors", key, NULL, device, count);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
    DEV_ENTER("nvmlDeviceGetCudaComputeCapability");
    const entry_t *e = answer(dev, "nvmlDeviceGetCudaComputeCapability", NULL, &rc);
    if (rc == OK) {
        *major = (int)ival(e, 0);
        *minor = (int)ival(e, 1);
    }
    return rc;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending) {
    DEV_ENTER("nvmlDeviceGetMigMode");
    const entry_t *e = answer(dev, "nvmlDeviceGetMigMode", NULL, &rc);
    if (rc == OK) {
        *current = (unsigned int)ival(e, 0);
        *pending = (unsigned int)ival(e, 1);
    }
    return rc;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corr, unsigned int *unc, unsigned int *pending,
                                       unsigned int *failure) {
    DEV_ENTER("nvmlDeviceGetRemappedRows");
    const entry_t *e = answer(dev, "nvmlDeviceGetRemappedRows", NULL, &rc);
    if (rc == OK) {
        *corr = (unsigned int)ival(e, 0);
        *unc = (unsigned int)ival(e, 1);
        *pending = (unsigned int)ival(e, 2);
        *failure = (unsigned int)ival(e, 3);
    }
    return rc;
}

/* nvml.h: nvmlMemory_t {total, free, used}; nvmlMemory_v2_t {version, total, reserved, free, used}. */
typedef struct {
    ull total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int version;
    ull total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

/* The run recorder's calls (compat/record/gpu_sampler.py, issue 15): utilisation and a handle's index. */
typedef struct { unsigned int gpu; unsigned int memory; } nvmlUtilization_t;
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u) {
    DEV_ENTER("nvmlDeviceGetUtilizationRates");
    const entry_t *e = answer(dev, "nvmlDeviceGetUtilizationRates", NULL, &rc);
    if (rc == OK) {
        u->gpu = (unsigned int)ival(e, 0);
        u->memory = (unsigned int)ival(e, 1);
    }
    return rc;
}
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index) {
    DEV_ENTER("nvmlDeviceGetIndex");
    *index = (unsigned int)dev;
    return OK;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *m) {
    DEV_ENTER("nvmlDeviceGetMemoryInfo");
    const entry_t *e = answer(dev, "nvmlDeviceGetMemoryInfo", NULL, &rc);
    if (rc == OK) {
        m->total = ival(e, 0);
        m->free = ival(e, 1);
        m->used = ival(e, 2);
    }
    return rc;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *m) {
    DEV_ENTER("nvmlDeviceGetMemoryInfo_v2");
    if (m == NULL || m->version != NVML_MEMORY_V2) return E_ARGUMENT_VERSION_MISMATCH;
    const entry_t *e = answer(dev, "nvmlDeviceGetMemoryInfo", NULL, &rc);
    if (rc == OK) {
        m->total = ival(e, 0);
        m->free = ival(e, 1);
        m->used = ival(e, 2);
        m->reserved = ival(e, 3);
    }
    return rc;
}

/* nvml.h nvmlPciInfo_t (v3): busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId, busId[32]. */
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

static nvmlReturn_t pci_info(const char *fn, nvmlDevice_t device, nvmlPciInfo_t *p) {
    DEV_ENTER(fn);
    const entry_t *e = answer(dev, "nvmlDeviceGetPciInfo", NULL, &rc);
    if (rc != OK) return rc;
    memset(p, 0, sizeof *p);
    size_t n = e->slen < sizeof p->busId - 1 ? e->slen : sizeof p->busId - 1;
    if (e->s) memcpy(p->busId, e->s, n);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%.*s", (int)(n > 4 ? n - 4 : n), p->busId + (n > 4 ? 4 : 0));
    unsigned int dom = 0, bus = 0, dv = 0;
    if (sscanf(p->busId, "%x:%x:%x", &dom, &bus, &dv) == 3) {
        p->domain = dom;
        p->bus = bus;
        p->device = dv;
    }
    return OK;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) { return pci_info("nvmlDeviceGetPciInfo_v3", d, p); }
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { return pci_info("nvmlDeviceGetPciInfo_v2", d, p); }

/* Two-call size pattern (nvml.h): with too small a buffer, *count gets the size needed and INSUFFICIENT_SIZE. */
typedef struct {
    unsigned int pid;
    ull usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

static nvmlReturn_t processes(const char *fn, const char *key, nvmlDevice_t device, unsigned int *count,
                              nvmlProcessInfo_t *infos) {
    DEV_ENTER(fn);
    const entry_t *e = answer(dev, key, NULL, &rc);
    if (rc != OK) return rc;
    unsigned int n = (unsigned int)(e->n / 2);
    if (count == NULL) return E_INVALID_ARGUMENT;
    if (*count < n || (infos == NULL && n > 0)) {
        *count = n;
        return E_INSUFFICIENT_SIZE;
    }
    *count = n;
    for (unsigned int i = 0; i < n; i++) {
        infos[i].pid = (unsigned int)e->v[2 * i];
        infos[i].usedGpuMemory = e->v[2 * i + 1];
        infos[i].gpuInstanceId = 0xFFFFFFFFu;
        infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
    return OK;
}
#define PROC_FN(name, key)                                                              \
    nvmlReturn_t name(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) {          \
        return processes(#name, key, d, c, i);                                          \
    }
PROC_FN(nvmlDeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses")
PROC_FN(nvmlDeviceGetComputeRunningProcesses_v2, "nvmlDeviceGetComputeRunningProcesses")
PROC_FN(nvmlDeviceGetGraphicsRunningProcesses_v3, "nvmlDeviceGetGraphicsRunningProcesses")
PROC_FN(nvmlDeviceGetGraphicsRunningProcesses_v2, "nvmlDeviceGetGraphicsRunningProcesses")

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned int *count, ull *addresses) {
    char key[96];
    snprintf(key, sizeof key, "nvmlDeviceGetRetiredPages:%d", cause);
    DEV_ENTER("nvmlDeviceGetRetiredPages");
    const entry_t *e = answer(dev, key, NULL, &rc);
    if (rc != OK) return rc;
    unsigned int n = (unsigned int)e->n;
    if (count == NULL) return E_INVALID_ARGUMENT;
    if (*count < n || (addresses == NULL && n > 0)) {
        *count = n;
        return E_INSUFFICIENT_SIZE;
    }
    *count = n;
    for (unsigned int i = 0; i < n; i++) addresses[i] = e->v[i];
    return OK;
}

/* ------------------------------------------------------------------ events (Xid) */

typedef struct {
    nvmlDevice_t device;
    ull eventType;
    ull eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
typedef struct nvmlEventSet_st {
    int unused;
} *nvmlEventSet_t;
static struct nvmlEventSet_st the_set;
#define XID_CRITICAL_ERROR 0x8ULL

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
    nvmlReturn_t rc = enter("nvmlEventSetCreate", -1);
    if (rc != OK) return rc;
    *set = &the_set;
    return OK;
}
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, ull *types) {
    DEV_ENTER("nvmlDeviceGetSupportedEventTypes");
    const entry_t *e = find(dev, "nvmlDeviceGetSupportedEventTypes");
    if (e && e->rc != OK) return e->rc;
    *types = e ? ival(e, 0) : XID_CRITICAL_ERROR;
    return OK;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, ull types, nvmlEventSet_t set) {
    DEV_ENTER("nvmlDeviceRegisterEvents");
    if (set != &the_set) return E_INVALID_ARGUMENT;
    const entry_t *e = find(dev, "nvmlDeviceRegisterEvents");
    if (e && e->rc != OK) return e->rc;
    registered[dev] |= types;
    return OK;
}
static nvmlReturn_t event_wait(const char *fn, nvmlEventSet_t set, nvmlEventData_t *data, unsigned int ms) {
    nvmlReturn_t rc = enter(fn, -1);
    if (rc != OK) return rc;
    if (set != &the_set || data == NULL) return E_INVALID_ARGUMENT;
    while (xid_next < n_xid) {
        int d = xid_dev[xid_next];
        ull x = xid_val[xid_next++];
        if (d >= 0 && d < MAX_DEV && (registered[d] & XID_CRITICAL_ERROR)) {
            memset(data, 0, sizeof *data);
            data->device = &devices[d];
            data->eventType = XID_CRITICAL_ERROR;
            data->eventData = x;
            data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
            return OK;
        }
    }
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return E_TIMEOUT;
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t s, nvmlEventData_t *d, unsigned int ms) { return event_wait("nvmlEventSetWait_v2", s, d, ms); }
nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t s, nvmlEventData_t *d, unsigned int ms) { return event_wait("nvmlEventSetWait", s, d, ms); }
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    trace("nvmlEventSetFree");
    return set == &the_set ? OK : E_INVALID_ARGUMENT;
}
