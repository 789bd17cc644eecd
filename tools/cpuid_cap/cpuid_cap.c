// Not part of the build: makes a process and every library in it see an AVX2 CPU (Haswell to
// Zen 3: no AVX-512, no AVX-VNNI, no AMX, no AVX10) on a machine that has more, so that ONNX
// Runtime's MLAS, oneDNN, XNNPACK's cpuinfo, OpenBLAS and etrt all take their AVX2 kernels in one
// benchmark (ETRT_MAX_ISA caps etrt alone; the others have no such knob).
//
// How: CPUID is made to fault (arch_prctl ARCH_SET_CPUID, the CPU flag "cpuid_fault"; the
// setting is per thread and inherited by threads and forks created after it), and the SIGSEGV
// handler answers each CPUID itself, the real answer with the hidden features' bits cleared.
// A CPU that has none of them needs no trap; one that has them and cannot fault CPUID is a
// one-line error and exit status 70, never a silently uncapped run. XGETBV is not trapped: the
// OS still enables the AVX-512 registers, which software only uses after CPUID says so. glibc
// picks its string functions before any of this runs (GLIBC_TUNABLES=glibc.cpu.hwcaps=... caps
// those).
//
// Build: cc -O2 -shared -fPIC tools/cpuid_cap/cpuid_cap.c -o build/cpuid_cap.so -ldl
// Use:   LD_AUDIT=build/cpuid_cap.so LD_PRELOAD=build/cpuid_cap.so COMMAND
// LD_AUDIT loads it before any library's constructor runs (a library loaded at start-up may
// read CPUID there, as GCC's __builtin_cpu_supports does); LD_PRELOAD puts its sigaction() and
// signal() in front of the program's, so a program that installs its own SIGSEGV handler keeps
// the trap, and its handler still gets every fault that is not a CPUID. For a Python process
// that loads its libraries later (dlopen), LD_PRELOAD alone is enough.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

enum { kCannotTrap = 70 };

// Leaf 7 subleaf 0.
static const uint32_t kHide7Ebx = 1u << 16 | 1u << 17 | 1u << 21 | 1u << 26 | 1u << 27 |
                                  1u << 28 | 1u << 30 | 1u << 31;  // F DQ IFMA PF ER CD BW VL
static const uint32_t kHide7Ecx = 1u << 1 | 1u << 6 | 1u << 11 | 1u << 12 |
                                  1u << 14;  // VBMI VBMI2 VNNI BITALG VPOPCNTDQ
static const uint32_t kHide7Edx = 1u << 2 | 1u << 3 | 1u << 8 | 1u << 22 | 1u << 23 | 1u << 24 |
                                  1u << 25;  // 4VNNIW 4FMAPS VP2INTERSECT AMX-BF16 FP16 AMX
// Leaf 7 subleaf 1.
static const uint32_t kHide71Eax = 1u << 4 | 1u << 5 | 1u << 21 | 1u << 23;  // AVX-VNNI BF16
                                                                            // AMX-FP16 AVX-IFMA
static const uint32_t kHide71Edx = 1u << 4 | 1u << 5 | 1u << 10 | 1u << 19;  // VNNI-INT8
                                                                            // NE-CONVERT
                                                                            // VNNI-INT16 AVX10

typedef int (*sigaction_fn)(int, const struct sigaction*, struct sigaction*);
static sigaction_fn real_sigaction;
static struct sigaction next_action;  // the program's SIGSEGV action: faults that are not CPUID
static volatile sig_atomic_t trapping;

static int set_cpuid_faulting(int on) { return (int)syscall(SYS_arch_prctl, ARCH_SET_CPUID, !on); }

static void capped_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4]) {
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  if (leaf == 7 && subleaf == 0) {
    r[1] &= ~kHide7Ebx;
    r[2] &= ~kHide7Ecx;
    r[3] &= ~kHide7Edx;
  } else if (leaf == 7 && subleaf == 1) {
    r[0] &= ~kHide71Eax;
    r[3] &= ~kHide71Edx;
  }
}

static void on_segv(int sig, siginfo_t* info, void* context) {
  ucontext_t* uc = (ucontext_t*)context;
  greg_t* regs = uc->uc_mcontext.gregs;
  // A faulting CPUID is a general-protection fault (SI_KERNEL); a bad address is a page fault,
  // whose instruction pointer may not even be readable.
  const unsigned char* ip = (const unsigned char*)regs[REG_RIP];
  if (info->si_code == SI_KERNEL && ip[0] == 0x0f && ip[1] == 0xa2) {
    int saved = errno;
    uint32_t r[4];
    set_cpuid_faulting(0);
    capped_cpuid((uint32_t)regs[REG_RAX], (uint32_t)regs[REG_RCX], r);
    set_cpuid_faulting(1);
    errno = saved;
    regs[REG_RAX] = r[0];
    regs[REG_RBX] = r[1];
    regs[REG_RCX] = r[2];
    regs[REG_RDX] = r[3];
    regs[REG_RIP] += 2;
    return;
  }
  if (next_action.sa_flags & SA_SIGINFO) {
    next_action.sa_sigaction(sig, info, context);
  } else if (next_action.sa_handler != SIG_DFL && next_action.sa_handler != SIG_IGN) {
    next_action.sa_handler(sig);
  } else {
    // Returning re-runs the faulting instruction, which now ends the process as it would have.
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    real_sigaction(SIGSEGV, &dfl, NULL);
  }
}

static int has_hidden_features(void) {
  uint32_t r[4], c[4];
  if (__get_cpuid_max(0, NULL) < 7) return 0;
  for (uint32_t sub = 0; sub < 2; ++sub) {
    __cpuid_count(7, sub, r[0], r[1], r[2], r[3]);
    capped_cpuid(7, sub, c);
    if (memcmp(r, c, sizeof r) != 0) return 1;
  }
  return 0;
}

static void install(void) {
  if (trapping) return;
  if (real_sigaction == NULL) real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  if (real_sigaction == NULL) return;
  // The LD_AUDIT copy of this module may already trap: ask the CPU itself.
  set_cpuid_faulting(0);
  if (!has_hidden_features()) return;
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = on_segv;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  if (real_sigaction(SIGSEGV, &ours, &next_action) != 0 || set_cpuid_faulting(1) != 0) {
    fprintf(stderr,
            "cpuid_cap: this CPU or kernel cannot make CPUID fault (arch_prctl ARCH_SET_CPUID: "
            "%s), so AVX-512 cannot be hidden from this process\n",
            strerror(errno));
    _exit(kCannotTrap);
  }
  trapping = 1;
}

__attribute__((constructor)) static void cpuid_cap_init(void) { install(); }

// As an LD_AUDIT module: loaded before the program's libraries, whose constructors may read
// CPUID.
unsigned int la_version(unsigned int version) {
  (void)version;
  install();
  return LAV_CURRENT;
}

// The program's own SIGSEGV handler is kept as next_action; the trap's stays installed.
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (real_sigaction == NULL) real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  if (sig != SIGSEGV || !trapping) return real_sigaction(sig, act, old);
  if (old != NULL) *old = next_action;
  if (act != NULL) next_action = *act;
  return 0;
}

sighandler_t signal(int sig, sighandler_t handler) {
  if (sig != SIGSEGV) {
    sighandler_t (*real_signal)(int, sighandler_t) =
        (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
    return real_signal(sig, handler);
  }
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}
