#ifndef PARLEY_LINUX_SHIM_H
#define PARLEY_LINUX_SHIM_H
// Glibc's Swift module does not export these headers, and accept4 sits behind _GNU_SOURCE.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <netinet/tcp.h>
int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
int pipe2(int pipefd[2], int flags);
#endif
