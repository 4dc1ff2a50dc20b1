/*
 * sdio-uart-loop DEV BAUD BYTES [TIMEOUT_S [WINDOW]]: put the UART behind DEV
 * (the in-tree sdio_uart's /dev/ttySDIO0 on the emulated SDIO card) into
 * loopback with TIOCMSET/TIOCM_LOOP (keeping DTR, RTS, OUT1, OUT2), raw 8N1
 * at BAUD, send BYTES of a pattern and read them back, with WINDOW (16 at
 * most) bytes sent and not yet read back at most when given: then the
 * 16-byte receive FIFO cannot overrun, however late the host serves the
 * card.  Prints
 *   @@UART baud=B bytes=N received=N mismatches=N first_bad=I ms=T
 * (ms in the guest's clock), and after a mismatch
 *   @@UART-BAD at=I got=HEX want=HEX
 *   @@UART-BAD match offset=J      (each J where the pattern has the bytes got)
 * and exits 0 when every byte came back, in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef TIOCM_LOOP
#define TIOCM_LOOP 0x8000       /* include/uapi/asm-generic/termios.h */
#endif

static unsigned char pattern(unsigned long i)
{
    return (unsigned char)(i * 7 + (i >> 8) * 13 + (i >> 16));
}

/* report_bad: print the bytes from the first bad one on, what was expected, and where they match the pattern */
static void report_bad(unsigned long first, const unsigned char *v, unsigned long nv,
                       unsigned long n)
{
    unsigned long i, j, k;

    printf("@@UART-BAD at=%lu got=", first);
    for (i = 0; i < nv; i++)
        printf("%02x", v[i]);
    printf(" want=");
    for (i = 0; i < nv; i++)
        printf("%02x", pattern(first + i));
    printf("\n");
    for (j = 0; j + 8 <= n + 4096; j++) {
        for (k = 0; k < 8 && v[k] == pattern(j + k); k++)
            ;
        if (k == 8)
            printf("@@UART-BAD match offset=%lu\n", j);
    }
}

static speed_t speed_of(long baud)
{
    switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    }
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    struct termios tio;
    unsigned char buf[4096];
    unsigned long n, sent = 0, got = 0, bad = 0, first_bad = (unsigned long)-1;
    unsigned char badv[64];
    unsigned long nbadv = 0, window;
    double t0, limit;
    long baud;
    speed_t sp;
    int fd, m;

    if (argc < 4) {
        fprintf(stderr, "usage: %s DEV BAUD BYTES [TIMEOUT_S]\n", argv[0]);
        return 2;
    }
    baud = atol(argv[2]);
    n = strtoul(argv[3], NULL, 0);
    limit = (argc > 4 ? atof(argv[4]) : 300) * 1e3;
    window = argc > 5 ? strtoul(argv[5], NULL, 0) : 0;
    if (window > 16) {
        fprintf(stderr, "window %lu: 16 bytes at most\n", window);
        return 2;
    }
    sp = speed_of(baud);
    if (!sp) {
        fprintf(stderr, "unsupported baud rate %ld\n", baud);
        return 2;
    }
    fd = open(argv[1], O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    if (tcgetattr(fd, &tio)) {
        perror("tcgetattr");
        return 1;
    }
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    /* wake the reader per 255 bytes, not per 16-byte interrupt */
    tio.c_cc[VMIN] = window ? window : 255;
    tio.c_cc[VTIME] = 0;
    tio.c_cflag &= ~(CRTSCTS | CSTOPB | PARENB);
    cfsetispeed(&tio, sp);
    cfsetospeed(&tio, sp);
    if (tcsetattr(fd, TCSANOW, &tio)) {
        perror("tcsetattr");
        return 1;
    }
    if (ioctl(fd, TIOCMGET, &m)) {
        perror("TIOCMGET");
        return 1;
    }
    m |= TIOCM_LOOP;
    if (ioctl(fd, TIOCMSET, &m)) {
        perror("TIOCMSET");
        return 1;
    }
    if (ioctl(fd, TIOCMGET, &m) || !(m & TIOCM_LOOP)) {
        fprintf(stderr, "loopback did not stick (mctrl 0x%x)\n", m);
        return 1;
    }
    tcflush(fd, TCIOFLUSH);

    t0 = now_ms();
    while (got < n && now_ms() - t0 < limit) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t r;

        if (sent < n && (!window || sent - got < window))
            p.events |= POLLOUT;
        int pr = poll(&p, 1, 100);

        if (pr < 0 && errno != EINTR) {
            perror("poll");
            return 1;
        }
        if (pr == 0)
            p.revents |= POLLIN;        /* a tail shorter than VMIN */
        if ((p.revents & POLLOUT) && sent < n) {
            size_t k = n - sent < sizeof(buf) ? n - sent : sizeof(buf);

            if (window && k > window - (sent - got))
                k = window - (sent - got);

            for (size_t i = 0; i < k; i++)
                buf[i] = pattern(sent + i);
            r = write(fd, buf, k);
            if (r > 0)
                sent += r;
            else if (r < 0 && errno != EAGAIN) {
                perror("write");
                return 1;
            }
        }
        if (p.revents & POLLIN) {
            r = read(fd, buf, sizeof(buf));
            if (r < 0 && errno != EAGAIN) {
                perror("read");
                return 1;
            }
            for (ssize_t i = 0; i < r; i++, got++) {
                if (buf[i] != pattern(got)) {
                    if (!bad)
                        first_bad = got;
                    if (got - first_bad < sizeof(badv))
                        badv[got - first_bad] = buf[i];
                    bad++;
                } else if (bad && got - first_bad < sizeof(badv)) {
                    badv[got - first_bad] = buf[i];
                }
                if (bad && got - first_bad < sizeof(badv))
                    nbadv = got - first_bad + 1;
            }
        }
        if (p.revents & (POLLERR | POLLHUP)) {
            fprintf(stderr, "poll: revents 0x%x\n", p.revents);
            break;
        }
    }
    printf("@@UART baud=%ld bytes=%lu received=%lu mismatches=%lu first_bad=%ld"
           " ms=%.0f\n", baud, n, got, bad, (long)first_bad, now_ms() - t0);
    if (bad)
        report_bad(first_bad, badv, nbadv, n);
    m &= ~TIOCM_LOOP;
    ioctl(fd, TIOCMSET, &m);
    close(fd);
    return got == n && !bad ? 0 : 1;
}
