// Linux system headers that Glibc's Swift module does not expose (epoll, eventfd).
#ifndef ENTITLE_CLINUX_H
#define ENTITLE_CLINUX_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/tcp.h>

/// `accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)` (accept4 needs _GNU_SOURCE).
int entitle_accept_nonblocking(int fd);
#endif
