#ifndef HKD_CLINUX_H
#define HKD_CLINUX_H
// What Glibc's Swift module lacks or imports awkwardly: epoll, eventfd, accept4, pipe2, flock, poll, TCP options,
// the allocator's figures.
// Wrappers take and return plain integers so Swift never touches epoll's packed union.
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>

static const uint32_t HK_EPOLLIN = EPOLLIN;
static const uint32_t HK_EPOLLOUT = EPOLLOUT;
static const uint32_t HK_EPOLLERR = EPOLLERR;
static const uint32_t HK_EPOLLHUP = EPOLLHUP;
static const uint32_t HK_EPOLLRDHUP = EPOLLRDHUP;
static const int HK_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int HK_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int HK_EPOLL_CTL_DEL = EPOLL_CTL_DEL;

static const int HK_SOCK_STREAM = SOCK_STREAM;
static const int HK_SOCK_NONBLOCK = SOCK_NONBLOCK;
static const int HK_SOCK_CLOEXEC = SOCK_CLOEXEC;
static const int HK_MSG_NOSIGNAL = MSG_NOSIGNAL;
static const int HK_EFD_NONBLOCK = EFD_NONBLOCK;
static const int HK_EFD_CLOEXEC = EFD_CLOEXEC;
static const int HK_TCP_NODELAY = TCP_NODELAY;
static const int HK_IPPROTO_TCP = IPPROTO_TCP;
static const int HK_LOCK_EX = LOCK_EX;
static const int HK_LOCK_NB = LOCK_NB;
static const int HK_LOCK_UN = LOCK_UN;
static const short HK_POLLIN = POLLIN;
static const short HK_POLLOUT = POLLOUT;

/// Bytes the allocator has handed out and not had back (mallinfo2's uordblks + hblkhd).
uint64_t hk_heap_in_use(void);
/// Bytes the allocator holds free (mallinfo2's fordblks).
uint64_t hk_heap_free(void);
/// Gives the allocator's free pages back to the system (malloc_trim(0)); 1 when some were.
int hk_heap_trim(void);

/// Makes the allocator serve every allocation of at least `bytes` with a mapping of its own, returned to the
/// system when freed (mallopt(M_MMAP_THRESHOLD), which also stops glibc raising the threshold as it goes); 1 on
/// success.
int hk_heap_map_large(size_t bytes);
/// epoll_create1(EPOLL_CLOEXEC).
int hk_epoll_create(void);
/// epoll_ctl with the event's data set to `token`.
int hk_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);
/// epoll_wait into parallel arrays of tokens and event masks; `max` is capped at 256.
int hk_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int max, int timeout_ms);
/// eventfd(initval, flags).
int hk_eventfd(unsigned int initval, int flags);
/// accept4 (a GNU extension).
int hk_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
/// pipe2 (a GNU extension).
int hk_pipe2(int fds[2], int flags);
/// flock(fd, operation).
int hk_flock(int fd, int operation);
/// poll on one descriptor; returns poll's result and stores revents.
int hk_poll_one(int fd, short events, int timeout_ms, short *revents);
/// Names the calling thread (truncated to the kernel's 15 bytes).
void hk_set_thread_name(const char *name);
/// pthread_sigmask(SIG_BLOCK) of the given signals for the calling thread.
int hk_block_signals(const int *signals, int count);
/// sigwait on the given signals; stores the signal received.
int hk_sigwait(const int *signals, int count, int *received);
/// sigtimedwait on the given signals for up to timeout_ns: the signal received, 0 when none came in time,
/// -errno on failure (-EINTR when another signal interrupted it).
int hk_sigtimedwait(const int *signals, int count, long long timeout_ns);
/// getrandom(buf, len, 0): bytes from the kernel's CSPRNG (blocks only until it is seeded at boot).
long hk_getrandom(void *buf, unsigned long len);

#endif
