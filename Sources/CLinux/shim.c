#define _GNU_SOURCE
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "CLinux.h"

uint64_t hk_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (uint64_t)info.uordblks + (uint64_t)info.hblkhd;
}
uint64_t hk_heap_free(void) { return (uint64_t)mallinfo2().fordblks; }
int hk_heap_trim(void) { return malloc_trim(0); }
int hk_heap_map_large(size_t bytes) { return mallopt(M_MMAP_THRESHOLD, (int)bytes); }

int hk_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int hk_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &event);
}

int hk_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int max, int timeout_ms) {
    struct epoll_event ready[256];
    if (max > 256) max = 256;
    int count = epoll_wait(epfd, ready, max, timeout_ms);
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

int hk_eventfd(unsigned int initval, int flags) { return eventfd(initval, flags); }
int hk_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) { return accept4(fd, addr, len, flags); }
int hk_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }
int hk_flock(int fd, int operation) { return flock(fd, operation); }

int hk_poll_one(int fd, short events, int timeout_ms, short *revents) {
    struct pollfd entry = {.fd = fd, .events = events, .revents = 0};
    int result = poll(&entry, 1, timeout_ms);
    *revents = entry.revents;
    return result;
}

void hk_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, 15);
    truncated[15] = 0;
    pthread_setname_np(pthread_self(), truncated);
}

static void fill_set(sigset_t *set, const int *signals, int count) {
    sigemptyset(set);
    for (int i = 0; i < count; i++) sigaddset(set, signals[i]);
}

int hk_block_signals(const int *signals, int count) {
    sigset_t set;
    fill_set(&set, signals, count);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int hk_sigwait(const int *signals, int count, int *received) {
    sigset_t set;
    fill_set(&set, signals, count);
    return sigwait(&set, received);
}

int hk_sigtimedwait(const int *signals, int count, long long timeout_ns) {
    sigset_t set;
    fill_set(&set, signals, count);
    struct timespec timeout = {.tv_sec = (time_t)(timeout_ns / 1000000000LL), .tv_nsec = (long)(timeout_ns % 1000000000LL)};
    int received = sigtimedwait(&set, NULL, &timeout);
    if (received >= 0) return received;
    return errno == EAGAIN ? 0 : -errno;
}

long hk_getrandom(void *buf, unsigned long len) { return (long)getrandom(buf, len, 0); }
