#ifndef HKD_CLINUX_H
#define HKD_CLINUX_H
// What Glibc's Swift module lacks: epoll, eventfd, accept4 and friends.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

int hk_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
int hk_pipe2(int fds[2], int flags);

#endif
