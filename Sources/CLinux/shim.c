#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include "CLinux.h"

int hk_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) { return accept4(fd, addr, len, flags); }
int hk_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }
