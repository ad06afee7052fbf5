// Package sys is the hook fast path's system call layer on linux/amd64 and linux/arm64: raw
// system calls in assembly (syscall_linux_*.s), so that 0.mosh/early/hookpath imports nothing
// whose package init runs after the runtime's and its init is the first after the runtime's
// (../README.md). The standard library's syscall package waits for sync, internal/godebug and
// the environment copy; os for syscall, time, io/fs and more.
//
// A raw call does not tell the scheduler it blocks (no entersyscall). Nothing else runs in the
// process at that point, but the runtime's sysmon sends a thread that runs one goroutine for long
// its preemption signal (SIGURG), so every blocking call here retries on EINTR, and a deadline is
// kept against CLOCK_MONOTONIC with a nonblocking descriptor and ppoll, never restarted by a retry.
// No garbage collection runs while a raw call blocks: callers allocate little.
//
// On other platforms the package is empty and the fast path keeps the standard library.
package sys
