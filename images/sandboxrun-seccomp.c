/*
 * sandboxrun-seccomp: confine, supervise and run one hook.
 *
 *     sandboxrun-seccomp [--gate IDLE] [--frame] [--deadline S] [--write PATH]...
 *                        [--landlock-optional] -- COMMAND [ARG...]
 *     sandboxrun-seccomp COMMAND [ARG...]      (protocol 1: the io_uring filter, then exec)
 *
 * Protocol 2 (the image label `sandboxrun.helper-protocol=2` says the helper speaks it;
 * sandboxrun runs it as the container's init, pid 1):
 *
 *  - Landlock: every write-class right (open for write, truncate, make or remove any
 *    kind of file, link/rename across folders) is allowed only below the --write paths
 *    (/tmp, $HOME, /dev, /proc from sandboxrun). A read-only bind does not stop opening a
 *    host FIFO for write (EROFS is for regular files, folders and symlinks only); this does.
 *    Without Landlock (kernel < 5.13, or not enabled, or gVisor) the helper refuses to run
 *    the hook, unless --landlock-optional says the runtime keeps host FIFOs out itself.
 *  - seccomp, stacked on the engine's profile so it can only take syscalls away: io_uring
 *    (a large kernel attack surface that Docker allows before 25); socket(AF_UNIX), which
 *    is how a hook would connect() to a host daemon's socket in a mounted folder, whatever
 *    the socket's mode (connect() needs write permission on the socket, never a writable
 *    mount); socketpair(AF_UNIX, SOCK_DGRAM), whose datagram sockets can sendto() or
 *    reconnect to any path (stream and seqpacket pairs cannot: EISCONN, name ignored).
 *    On x86_64 the i386 entry points are covered too: socket (359) and socketpair (360)
 *    by their arguments, socketcall (102), whose arguments live in memory, entirely;
 *    x32 numbers are the native ones with bit 30 set, which the filter clears.
 *  - Supervision: the hook runs as our child; signals we get are passed on to it; we exit
 *    with its status (128+N for death by signal N, as docker-init reports it). At the
 *    --deadline (seconds after our start) we kill every process of the container and exit
 *    137: the container ends on time even when the sandboxrun that started it is gone.
 *    As the PID namespace's init we cannot be stopped or killed from inside it, and
 *    when we exit the kernel kills whatever is left.
 *
 *  - Gate (`--gate IDLE`, label `sandboxrun.helper-gate=1`): for a container started ahead
 *    of time (sandboxrun's pool). Before anything else the helper waits until stdin is
 *    readable (the event arrived, or EOF), without reading it, so the hook starts only
 *    once its event is delivered and sees the workspace as it is then; the --deadline
 *    counts from the gate's opening. No event within IDLE seconds: a start error (exit
 *    125), so an abandoned container ends by itself and is never mistaken for a hook run.
 *
 *  - Final frame (`--frame`, label `sandboxrun.helper-frame=1`): the answer is known when
 *    the hook has exited, not when the container has gone (its teardown is ~50-70 ms on
 *    runc). Before anything else but the gate, the helper reads a header from stdin: 32
 *    hex digits and a newline, a nonce sandboxrun draws per run; the hook gets the rest
 *    of stdin (its event) and never the nonce (not in its stdin, argv or environment,
 *    and we are not dumpable before the fork). When the hook's run ends, however it ends,
 *    the helper writes the same frame on stdout and on stderr, each in one write (atomic
 *    in the pipe, below PIPE_BUF), after everything the hook wrote there before it ended:
 *
 *        \x1eSRF1 NONCE exit=CODE reason=REASON oom=0|1|?\n
 *
 *    REASON: exit (the hook ended by itself; CODE is its status), deadline (--deadline
 *    killed it: 137), output (sandboxrun sent SIGUSR1 because the output passed its cap:
 *    137), start (the helper could not confine it: 125; exec's own failures, 126/127,
 *    come as exit, their stderr line says what failed). oom: whether the memory cgroup OOM-killed a
 *    process during the run ("?" when the cgroup's counter cannot be read). A hook can
 *    print lookalikes of this frame, but not the nonce: sandboxrun takes a frame only with
 *    its own nonce, and only once on each stream. With --frame, SIGUSR1 ends the hook
 *    (it is not passed on): the engine's kill reaches us from outside; inside, the
 *    seccomp rules below keep every process of the hook from signalling us.
 *
 * The filters are installed before the fork, so the supervisor is as confined as the hook
 * (a hook cannot ptrace a less-confined process through it), and it is not dumpable.
 *
 * Start failures: 125 (a filter, Landlock, bad options) and 126/127 (COMMAND cannot be
 * run / found), with a last stderr line "sandboxrun-seccomp: start-error: ...": sandboxrun
 * reports that as a sandbox failure, not as the hook's exit code. At the deadline the last
 * line is "sandboxrun-seccomp: deadline: ...". A hook can print these lines itself; that
 * can only turn its own run into a failure (a block under --fail-closed), never an allow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset /* the same numbers on every architecture */
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

#define ME "sandboxrun-seccomp: "
#define MAX_WRITE 64

/* -- seccomp ------------------------------------------------------------------- */

#define X32_SYSCALL_BIT 0x40000000u
#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define EPERM_ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
#define JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define DENY(nr) JEQ((nr), 0, 1), EPERM_
/* syscall nr with args[i] == val: deny; with another value: allow; another syscall: go on. */
#define DENY_IF(nr, i, val) JEQ((nr), 0, 4), LD_ARG(i), JEQ((val), 0, 1), EPERM_, ALLOW
/* socketpair(AF_UNIX, SOCK_DGRAM | flags, ...): deny; other pairs: allow; the same. */
#define DENY_UNIX_DGRAM_PAIR(nr)                                                  \
    JEQ((nr), 0, 7), LD_ARG(0), JEQ(AF_UNIX, 0, 4), LD_ARG(1),                    \
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf), JEQ(SOCK_DGRAM, 0, 1), EPERM_, ALLOW
#define IO_URING DENY(425), DENY(426), DENY(427) /* io_uring_setup/enter/register */
/* Nothing signals or traces the supervisor (`me`): gVisor, unlike Linux, lets a process
 * stop its PID namespace's init. kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,
 * pidfd_open take the pid first; ptrace takes it second. */
#define SIGNALS(kill, tkill, tgkill, sigq, tgsigq, ptrace)                          \
    DENY_IF(kill, 0, me), DENY_IF(tkill, 0, me), DENY_IF(tgkill, 0, me),          \
    DENY_IF(sigq, 0, me), DENY_IF(tgsigq, 0, me), DENY_IF(434, 0, me), DENY_IF(ptrace, 1, me)

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define NATIVE_RULES DENY_IF(41, 0, AF_UNIX), DENY_UNIX_DGRAM_PAIR(53), \
    SIGNALS(62, 200, 234, 129, 297, 101)
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_RULES DENY(102) /* socketcall */, DENY_IF(359, 0, AF_UNIX), \
    DENY_UNIX_DGRAM_PAIR(360), SIGNALS(37, 238, 270, 178, 335, 26)
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define NATIVE_RULES DENY_IF(198, 0, AF_UNIX), DENY_UNIX_DGRAM_PAIR(199), \
    SIGNALS(129, 130, 131, 138, 240, 117)
#define COMPAT_ARCH AUDIT_ARCH_ARM
#define COMPAT_RULES DENY_IF(281, 0, AF_UNIX), DENY_UNIX_DGRAM_PAIR(288), \
    SIGNALS(37, 238, 268, 178, 363, 26)
#else
#error "sandboxrun-seccomp knows the syscall numbers of x86_64 and aarch64 only"
#endif
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int install_seccomp(int protocol) {
    __u32 me = (__u32)getpid();
    struct sock_filter v1[] = {LD_NR, BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT),
                               IO_URING, ALLOW};
    struct sock_filter native[] = {LD_NR, BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT),
                                   IO_URING, NATIVE_RULES, ALLOW};
    struct sock_filter compat[] = {LD_NR, IO_URING, COMPAT_RULES, ALLOW};
    /* arch == native ? native : arch == compat ? compat : EPERM */
    struct sock_filter v2[3 + COUNT(native) + COUNT(compat) + 1] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        JEQ(NATIVE_ARCH, 0, COUNT(native)),
    };
    struct sock_filter *at = v2 + 2;
    memcpy(at, native, sizeof(native));
    at += COUNT(native);
    *at++ = (struct sock_filter)JEQ(COMPAT_ARCH, 0, COUNT(compat));
    memcpy(at, compat, sizeof(compat));
    at += COUNT(compat);
    *at = (struct sock_filter)EPERM_; /* an architecture whose numbers we do not know */
    struct sock_fprog p1 = {COUNT(v1), v1}, p2 = {COUNT(v2), v2};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, protocol == 1 ? &p1 : &p2);
}

/* -- Landlock ------------------------------------------------------------------ */

static const char NO_LANDLOCK[] = "Landlock is not available here";

static const char *landlock(char **paths, int n) {
    int abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) return NO_LANDLOCK;
    __u64 file = LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0);
    __u64 all = file | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                LANDLOCK_ACCESS_FS_MAKE_SYM | (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0);
    struct landlock_ruleset_attr attr = {.handled_access_fs = all};
    int rs = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
    if (rs < 0) return "cannot create a Landlock ruleset";
    for (int i = 0; i < n; i++) {
        int fd = open(paths[i], O_PATH | O_CLOEXEC);
        struct stat st;
        if (fd < 0) continue; /* nothing there: nothing to write to */
        struct landlock_path_beneath_attr rule = {.parent_fd = fd, .allowed_access = all};
        if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rule.allowed_access = file;
        int rc = syscall(__NR_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        close(fd);
        if (rc != 0) return "cannot add a Landlock rule";
    }
    if (syscall(__NR_landlock_restrict_self, rs, 0) != 0) return "cannot enforce Landlock";
    close(rs);
    return NULL;
}

/* -- running the hook ---------------------------------------------------------- */

static void start_error(const char *what, const char *detail) {
    fprintf(stderr, "\n" ME "start-error: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

static int exec_hook(char **argv) {
    execvp(argv[0], argv);
    int err = errno;
    fprintf(stderr, "\n" ME "start-error: cannot run %s: %s\n", argv[0], strerror(err));
    return err == ENOENT ? 127 : 126;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* -- the final frame ----------------------------------------------------------- */

#define NONCE_LEN 32
static char nonce[NONCE_LEN + 1]; /* empty: no --frame */
static const char *reason = "exit";

/* Read the header (the nonce and a newline) off stdin, exactly that many bytes: the rest
 * is the hook's. 0, else a start error (no nonce: no frame can follow). */
static int read_nonce(void) {
    char head[NONCE_LEN + 1];
    size_t got = 0;
    while (got < sizeof(head)) {
        ssize_t n = read(STDIN_FILENO, head + got, sizeof(head) - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            start_error("no frame header on stdin (--frame)", n < 0 ? strerror(errno) : NULL);
            return 125;
        }
        got += (size_t)n;
    }
    for (int i = 0; i < NONCE_LEN; i++) {
        char c = head[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            start_error("a bad frame header on stdin (--frame)", NULL);
            return 125;
        }
    }
    if (head[NONCE_LEN] != '\n') {
        start_error("a bad frame header on stdin (--frame)", NULL);
        return 125;
    }
    memcpy(nonce, head, NONCE_LEN);
    nonce[NONCE_LEN] = 0;
    return 0;
}

/* The memory cgroup's count of OOM kills (cgroup v1, then v2); -1: unknown. */
static long oom_kills(void) {
    static const char *files[] = {"/sys/fs/cgroup/memory/memory.oom_control",
                                  "/sys/fs/cgroup/memory.events"};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        FILE *in = fopen(files[f], "re");
        if (!in) continue;
        char key[64];
        long value;
        while (fscanf(in, "%63s %ld", key, &value) == 2) {
            if (strcmp(key, "oom_kill") == 0) {
                fclose(in);
                return value;
            }
        }
        fclose(in);
    }
    return -1;
}

static long oom_before = -1;

static void write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return; /* the reader is gone: nobody to tell */
        buf += n;
        len -= (size_t)n;
    }
}

/* The end of the run: the frame on both streams (see the top), then our exit status. */
static int finish(int code) {
    if (!nonce[0]) return code;
    long after = oom_before < 0 ? -1 : oom_kills();
    const char *oom = after < 0 ? "?" : after > oom_before ? "1" : "0";
    char frame[128];
    int len = snprintf(frame, sizeof(frame), "\x1eSRF1 %s exit=%d reason=%s oom=%s\n", nonce,
                       code, reason, oom);
    write_all(STDOUT_FILENO, frame, (size_t)len);
    write_all(STDERR_FILENO, frame, (size_t)len);
    return code;
}

static int supervise(char **argv, double deadline) {
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    signal(SIGCHLD, SIG_DFL); /* never SIG_IGN: children must stay waitable */
    if (getpid() != 1) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    pid_t child = fork();
    if (child < 0) {
        start_error("cannot fork", strerror(errno));
        reason = "start";
        return 126;
    }
    if (child == 0) { /* its own session and process group: kill(0, ...) cannot reach us */
        setsid();
        sigprocmask(SIG_SETMASK, &old, NULL);
        _exit(exec_hook(argv));
    }
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    double end = deadline > 0 ? now() + deadline : 0;
    for (;;) {
        struct timespec wait = {0, 0};
        double left = end - now();
        if (end && left > 0) {
            wait.tv_sec = (time_t)left;
            wait.tv_nsec = (long)((left - wait.tv_sec) * 1e9);
        }
        int sig = end && left <= 0 ? -1 : sigtimedwait(&all, NULL, end ? &wait : NULL);
        if (sig < 0 && errno == EINTR) continue;
        if (sig < 0) { /* the deadline: end every process we may signal, then ourselves */
            if (!nonce[0]) /* with a frame, the frame says it: stderr stays the hook's */
                fprintf(stderr, "\n" ME "deadline: killed the hook after %gs\n", deadline);
            kill(-1, SIGKILL);
            reason = "deadline";
            return 128 + SIGKILL;
        }
        if (sig == SIGUSR1 && nonce[0]) { /* sandboxrun's: the output passed its cap */
            kill(-1, SIGKILL);
            if (strcmp(reason, "exit") == 0) reason = "output";
            continue; /* the child's SIGCHLD follows */
        }
        if (sig != SIGCHLD) {
            kill(child, sig);
            continue;
        }
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            if (pid == child)
                return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        }
    }
}

/* Wait until stdin is readable (data, EOF or an error on it); never read from it: what
 * is there is the hook's. 0: open; 125 after a start error (no event within idle, or
 * no stdin to wait on). Signals sent to us meanwhile are ignored: we are pid 1. */
static int gate(double idle) {
    struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
    double end = now() + idle;
    for (;;) {
        double left = end - now();
        if (left <= 0) {
            fprintf(stderr, "\n" ME "start-error: no event within %gs (--gate)\n", idle);
            return 125;
        }
        int rc = poll(&in, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0 || (rc > 0 && (in.revents & POLLNVAL))) {
            start_error("cannot wait for the event", rc < 0 ? strerror(errno) : "no stdin");
            return 125;
        }
        if (rc > 0) return 0; /* POLLIN, POLLHUP or POLLERR: the hook reads what there is */
    }
}

static int usage(void) {
    start_error("usage: sandboxrun-seccomp [--gate IDLE] [--frame] [--deadline S]"
                " [--write PATH]... [--landlock-optional] -- COMMAND [ARG...]", NULL);
    return 125;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        start_error("cannot set no_new_privs", strerror(errno));
        return 125;
    }
    if (strncmp(argv[1], "--", 2) != 0) { /* protocol 1: images built before protocol 2 */
        if (install_seccomp(1) != 0) {
            start_error("cannot install the seccomp filter", strerror(errno));
            return 125;
        }
        return exec_hook(argv + 1);
    }
    char *write[MAX_WRITE];
    int nwrite = 0, landlock_optional = 0, framed = 0, i = 1;
    double deadline = 0, idle = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--deadline") == 0 && i + 1 < argc) {
            char *end;
            deadline = strtod(argv[++i], &end);
            if (*end || !(deadline > 0)) return usage();
        } else if (strcmp(argv[i], "--gate") == 0 && i + 1 < argc) {
            char *end;
            idle = strtod(argv[++i], &end);
            if (*end || !(idle > 0)) return usage();
        } else if (strcmp(argv[i], "--write") == 0 && i + 1 < argc && nwrite < MAX_WRITE) {
            write[nwrite++] = argv[++i];
        } else if (strcmp(argv[i], "--frame") == 0) {
            framed = 1;
        } else if (strcmp(argv[i], "--landlock-optional") == 0) {
            landlock_optional = 1;
        } else {
            return usage();
        }
    }
    if (i + 1 >= argc) return usage();
    if (idle > 0 && gate(idle) != 0) return 125; /* first: the rest is as on a cold start */
    /* Not dumpable from here on: the nonce is in our memory (a hook of the same uid could
     * otherwise read it through /proc/1/mem before the supervisor's own prctl). */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (framed && read_nonce() != 0) return 125;
    oom_before = oom_kills();
    reason = "start"; /* until the hook runs */
    const char *why = landlock(write, nwrite);
    if (why && !(landlock_optional && why == NO_LANDLOCK)) {
        start_error(why, "host sockets and FIFOs in mounted folders would be reachable;"
                         " use --runtime runsc or a kernel with Landlock (>= 5.13, enabled)");
        return finish(125);
    }
    if (install_seccomp(2) != 0) {
        start_error("cannot install the seccomp filter", strerror(errno));
        return finish(125);
    }
    reason = "exit";
    return finish(supervise(argv + i + 1, deadline));
}
