/*
 * sandboxrun-seccomp: add a seccomp filter that denies io_uring, then exec the hook.
 *
 *     sandboxrun-seccomp COMMAND [ARG...]
 *
 * Seccomp filters stack: this one runs on top of the engine's own profile, so it can
 * only take syscalls away. io_uring is a large kernel attack surface that Docker's
 * default profile allows before Docker 25. The syscall number is masked with the x32
 * bit cleared, and io_uring has the same numbers (425-427) on every architecture and
 * in the i386 compat table, so neither alternative entry point gets past the filter.
 *
 * Exit codes as env(1): 125 if the filter cannot be installed, 126/127 if COMMAND
 * cannot be run or found.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000u
#define DENY(nr)                                          \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),      \
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs("usage: sandboxrun-seccomp COMMAND [ARG...]\n", stderr);
        return 125;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT),
        DENY(425), /* io_uring_setup */
        DENY(426), /* io_uring_enter */
        DENY(427), /* io_uring_register */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("sandboxrun-seccomp: cannot install the filter");
        return 125;
    }
    execvp(argv[1], argv + 1);
    int err = errno;
    perror(argv[1]);
    return err == ENOENT ? 127 : 126;
}
