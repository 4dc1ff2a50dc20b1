// SPDX-License-Identifier: GPL-2.0
/*
 * sdio_test: a function driver for the emulated board's SDIO card (function
 * 1 of qemu/sdio_card.c, vendor 0x5153 device 0x5d10) that exercises the
 * host driver with what SDIO function drivers send:
 *
 *  cmd52   CMD52 reads and writes (RAM, registers, CCCR), checked by CMD53
 *  byte    CMD53 byte mode at every size 1-512, each written in byte mode
 *          and read back in block mode and the other way round, then
 *          random (size, address, buffer offset) triples
 *  block   block mode at block sizes 64, 256 and 512, 1..N blocks, read
 *          back in byte mode (and the other way round)
 *  fw      219557 bytes the way brcmfmac downloads firmware
 *          (brcmf_sdiod_ramrw: sdio_memcpy_toio per 32 KiB of a window,
 *          block size 64), read back in byte mode; and the same bytes
 *          through the card's FIFO port (sdio_writesb, fixed address,
 *          block size 256)
 *  sg      scatterlists as brcmf_sdiod_sglist_rw builds them: one
 *          mmc_request through mmc_wait_for_req with up to max_segs
 *          entries of odd lengths, padded to the block size, at odd
 *          offsets, sharing cache lines with their neighbours (guard bytes
 *          between them are checked), both directions
 *  irq     the card's interrupt: raised idle and during transfers,
 *          counted (delivered by the handler / raised by the card) with the
 *          latency from the card's assertion (read back from the card, in
 *          the virtual time the ARM generic timer counts) to the handler
 *  irqchain each interrupt's handler raises the next, 0 to 300 us later:
 *          interrupts that arrive between the host's service of one and its
 *          acknowledgement (prints @@SDIO-IRQCHAIN); the handlers of both
 *          cases check CCCR INTx first and count a call with nothing pending
 *          (spurious_calls) instead of taking it for an interrupt
 *  irqbusy (not in "all") the card's interrupt raised while 64 KiB reads
 *          run back to back until it is delivered: the most reads one
 *          interrupt waited through (prints @@SDIO-IRQBUSY)
 *  faults  (not in "all") CMD52 and CMD53 byte/block-mode writes and reads
 *          while the host injects CRC errors and timeouts: errors per kind,
 *          never wrong data (prints @@SDIO-FAULTS); faults_check, with the
 *          faults off, reads the whole window back (@@SDIO-FAULTS-CHECK)
 *  bench   not in "all": make bench's rows, each for bench_ms of virtual
 *          time (ktime; only the host calls are timed), every read checked
 *          against the shadow and every write read back: sdio_memcpy_toio/
 *          fromio of 2 KiB and 64 KiB (block size 512), 64 KiB as 64
 *          scatterlist entries of 1 KiB (as few requests as the host takes),
 *          64-byte byte-mode CMD53 and CMD52 ops/s (a write and its
 *          read-back), and the latency of bench_irqs interrupts raised idle
 *          (median, p99 at rank ceil(0.99 n), maximum); each row prints
 *            @@SDIO-BENCH name=NAME value=V unit=MiB/s|ops/s|us ...
 *
 * A shadow of the card's 64 KiB RAM window checks every read; every write
 * is read back through another access path.  Each test prints
 *   @@SDIO-RESULT test=NAME ops=N bytes=N mismatches=N errors=N ...
 * and the run ends with
 *   @@SDIO-DONE tests=N mismatches=N errors=N
 * Parameters: run= (comma-separated tests, default all; run at probe),
 * seed=, triples= (random byte-mode triples), irqs= (interrupts per kind),
 * fault_ops= (operations of the faults test).
 * Writing test names to /sys/kernel/debug/sdio_test/run runs them again;
 * cmd52 (any CMD52, CCCR included), xfer (a 64 KiB block-mode read) and
 * claim (hold the interrupt, count deliveries) are for host-side interrupt
 * tests.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/uaccess.h>
#include <asm/barrier.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <linux/module.h>
#include <linux/mmc/card.h>
#include <linux/mmc/core.h>
#include <linux/mmc/host.h>
#include <linux/mmc/sdio.h>
#include <linux/mmc/sdio_func.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#define VENDOR          0x5153
#define DEVICE          0x5d10

#define RAM_SIZE        0x10000
#define REG_FIFO        0x10000
#define REG_WINDOW      0x10001
#define REG_FIFO_LEVEL  0x10004
#define REG_IRQ_DELAY   0x10008
#define REG_IRQ_CTRL    0x1000c
#define REG_IRQ_ACK     0x1000d
#define REG_ASSERT_NS   0x10010
#define REG_RAISED      0x10018
#define REG_UNDERRUNS   0x10020
#define REG_MAGIC       0x10028

#define FW_SIZE         219557
#define FW_CHUNK        0x8000          /* brcmfmac's backplane window */
#define SG_MAX          64
#define LAT_MAX         2048    /* interrupt latencies kept per test */
#define GUARD           0xa5

static char *run = "all";
module_param(run, charp, 0644);
MODULE_PARM_DESC(run, "tests to run at probe (comma-separated, or all)");
static ulong seed = 1;
module_param(seed, ulong, 0644);
static uint triples = 3000;
module_param(triples, uint, 0644);
static uint irqs = 40;
module_param(irqs, uint, 0644);

struct sdio_test {
	struct sdio_func *func;
	struct rnd_state rnd;
	u8 *shadow;             /* the card's RAM window 0 */
	u8 *buf, *buf2;         /* 256 KiB each */
	/* the sg test's list */
	struct scatterlist sgl[SG_MAX];
	unsigned int lens[SG_MAX], offs[SG_MAX];
	/* the current test's totals */
	u64 ops, bytes, mismatches, errors;
	u64 all_mismatches, all_errors;
	unsigned int tests;
	/* interrupts */
	atomic_t delivered;
	atomic_t spurious_calls; /* the handler ran with nothing pending */
	unsigned int chain_left; /* irqchain: interrupts still to raise */
	struct completion irq_done;
	u64 irq_lat_ns[LAT_MAX];
	unsigned int nlat;
	bool irq_ack_failed;
	struct dentry *dir;
	struct mutex lock;
	int cmd52_result;       /* debugfs cmd52: the last R5 data or error */
	bool claimed;           /* debugfs claim: the interrupt held */
};

static u32 rnd(struct sdio_test *t, u32 n)
{
	return n ? prandom_u32_state(&t->rnd) % n : 0;
}

static void fill_rand(struct sdio_test *t, u8 *p, size_t n)
{
	prandom_bytes_state(&t->rnd, p, n);
}

/* the ARM generic timer: the same virtual time the card stamps */
static u64 now_counter_ns(void)
{
	u64 cnt;
	u32 frq;

	isb();
	asm volatile("mrrc p15, 1, %Q0, %R0, c14" : "=r" (cnt));
	asm volatile("mrc p15, 0, %0, c14, c0, 0" : "=r" (frq));
	return mul_u64_u32_div(cnt, NSEC_PER_SEC, frq);
}

static void count_mismatch(struct sdio_test *t, const char *what, u32 addr,
			   const u8 *got, const u8 *want, size_t n)
{
	size_t i, bad = 0, first = n;

	for (i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			if (first == n)
				first = i;
			bad++;
		}
	}
	if (bad) {
		if (t->mismatches < 20)
			pr_err("sdio_test: %s: %zu of %zu bytes differ at 0x%x (first +%zu: %02x, want %02x)\n",
			       what, bad, n, addr, first, got[first], want[first]);
		t->mismatches += bad;
	}
}

static void count_error(struct sdio_test *t, const char *what, u32 addr,
			size_t n, int err)
{
	if (t->errors < 20)
		pr_err("sdio_test: %s at 0x%x (%zu bytes): error %d\n", what,
		       addr, n, err);
	t->errors++;
}

/*
 * One CMD53 as brcmf_sdiod_sglist_rw sends it: a mmc_request of our own
 * with the given scatterlist.  blksz 0: byte mode (n bytes, 1-512).
 */
static int cmd53_sg(struct sdio_test *t, bool write, u32 addr, bool incr,
		    unsigned int blksz, unsigned int blocks, unsigned int bytes,
		    struct scatterlist *sg, unsigned int sg_len)
{
	struct sdio_func *func = t->func;
	struct mmc_card *card = func->card;
	struct mmc_request mrq = {};
	struct mmc_command cmd = {};
	struct mmc_data data = {};

	cmd.opcode = SD_IO_RW_EXTENDED;
	cmd.arg = write ? 0x80000000 : 0;
	cmd.arg |= func->num << 28;
	cmd.arg |= incr ? 0x04000000 : 0;
	cmd.arg |= (addr & 0x1ffff) << 9;
	if (blksz) {
		cmd.arg |= 0x08000000 | blocks;
		data.blksz = blksz;
		data.blocks = blocks;
	} else {
		cmd.arg |= bytes == 512 ? 0 : bytes;
		data.blksz = bytes;
		data.blocks = 1;
	}
	cmd.flags = MMC_RSP_SPI_R5 | MMC_RSP_R5 | MMC_CMD_ADTC;
	data.flags = write ? MMC_DATA_WRITE : MMC_DATA_READ;
	data.sg = sg;
	data.sg_len = sg_len;
	mrq.cmd = &cmd;
	mrq.data = &data;
	mmc_set_data_timeout(&data, card);

	sdio_claim_host(func);
	mmc_wait_for_req(card->host, &mrq);
	sdio_release_host(func);

	t->ops++;
	if (cmd.error)
		return cmd.error;
	if (data.error)
		return data.error;
	if (cmd.resp[0] & R5_ERROR)
		return -EIO;
	if (cmd.resp[0] & R5_FUNCTION_NUMBER)
		return -EINVAL;
	if (cmd.resp[0] & R5_OUT_OF_RANGE)
		return -ERANGE;
	t->bytes += data.blksz * data.blocks;
	return 0;
}

/* one CMD53 on a linear buffer: byte mode (blksz 0) or block mode */
static int cmd53(struct sdio_test *t, bool write, u32 addr, bool incr,
		 unsigned int blksz, void *buf, unsigned int bytes)
{
	struct scatterlist sg;

	sg_init_one(&sg, buf, bytes);
	return cmd53_sg(t, write, addr, incr, blksz, blksz ? bytes / blksz : 0,
			bytes, &sg, 1);
}

/* the host's limit on blocks of blksz in one request */
static unsigned int max_blocks(struct sdio_test *t, unsigned int blksz)
{
	struct mmc_host *host = t->func->card->host;

	return min3(511u, host->max_blk_count, host->max_req_size / blksz);
}

static int set_blksz(struct sdio_test *t, unsigned int blksz)
{
	int err;

	sdio_claim_host(t->func);
	err = sdio_set_block_size(t->func, blksz);
	sdio_release_host(t->func);
	return err;
}

static int t_writeb(struct sdio_test *t, u8 v, u32 addr)
{
	int err;

	sdio_claim_host(t->func);
	sdio_writeb(t->func, v, addr, &err);
	sdio_release_host(t->func);
	t->ops++;
	return err;
}

static int t_readb(struct sdio_test *t, u32 addr, u8 *v)
{
	int err;

	sdio_claim_host(t->func);
	*v = sdio_readb(t->func, addr, &err);
	sdio_release_host(t->func);
	t->ops++;
	return err;
}

/* a little-endian register of n bytes, lowest byte first (it latches) */
static int read_reg(struct sdio_test *t, u32 addr, unsigned int n, u64 *v)
{
	unsigned int i;
	u8 b;
	int err;

	*v = 0;
	for (i = 0; i < n; i++) {
		err = t_readb(t, addr + i, &b);
		if (err)
			return err;
		*v |= (u64)b << (8 * i);
	}
	return 0;
}

static int set_window(struct sdio_test *t, unsigned int w)
{
	return t_writeb(t, w, REG_WINDOW);
}

/*
 * Read [addr, addr + n) of window 0 in block mode (512-byte blocks covering
 * it, then a byte-mode tail) and compare with the shadow.
 */
static void verify_block(struct sdio_test *t, const char *what, u32 addr,
			 u32 n)
{
	u32 start = ALIGN_DOWN(addr, 512), end = min_t(u32, ALIGN(addr + n, 512), RAM_SIZE);
	u32 pos = start;
	int err;

	if (set_blksz(t, 512))
		return count_error(t, "set block size", 512, 0, -EIO);
	while (pos < end) {
		u32 len = min(end - pos, max_blocks(t, 512) * 512);

		err = cmd53(t, false, pos, true, 512, t->buf2, len);
		if (err)
			return count_error(t, what, pos, len, err);
		count_mismatch(t, what, pos, t->buf2, t->shadow + pos, len);
		pos += len;
	}
}

/*
 * the same in byte mode, at most 512 bytes a command, into t->buf2 + off;
 * the bytes before it and the 64 after it must keep their guard pattern
 * (a controller that writes memory in whole words or bursts must not get
 * an odd length or offset in place)
 */
static void verify_bytes(struct sdio_test *t, const char *what, u32 addr,
			 u32 n, unsigned int off)
{
	u32 pos = addr;
	u8 guard[64];
	int err;

	memset(guard, GUARD, sizeof(guard));
	while (pos < addr + n) {
		u32 len = min(addr + n - pos, 512u);

		memset(t->buf2, GUARD, off + len + sizeof(guard));
		err = cmd53(t, false, pos, true, 0, t->buf2 + off, len);
		if (err)
			return count_error(t, what, pos, len, err);
		count_mismatch(t, what, pos, t->buf2 + off, t->shadow + pos, len);
		if (off)
			count_mismatch(t, "guard bytes before a byte-mode read",
				       pos, t->buf2, guard, min(off, 64u));
		count_mismatch(t, "guard bytes after a byte-mode read", pos,
			       t->buf2 + off + len, guard, sizeof(guard));
		pos += len;
	}
}

/* write [addr, addr + n) of window 0 from buf in block mode, bs blocks */
static int write_blocks(struct sdio_test *t, u32 addr, const u8 *src, u32 n,
			unsigned int bs)
{
	u32 pos = 0;
	int err;

	while (pos < n) {
		u32 len = min((n - pos) / bs, max_blocks(t, bs)) * bs;

		if (!len)
			len = n - pos;  /* a tail shorter than a block */
		memcpy(t->buf2, src + pos, len);
		err = cmd53(t, true, addr + pos, true, len % bs ? 0 : bs,
			    t->buf2, len);
		if (err)
			return err;
		memcpy(t->shadow + addr + pos, src + pos, len);
		pos += len;
	}
	return 0;
}

/* ---- tests ------------------------------------------------------------- */

static void test_cmd52(struct sdio_test *t)
{
	u64 v;
	u8 b;
	u32 i, addr;
	int err;

	err = read_reg(t, REG_MAGIC, 4, &v);
	if (err || v != 0x4f494453)
		count_error(t, "magic register", REG_MAGIC, 4, err ?: -EINVAL);
	sdio_claim_host(t->func);
	b = sdio_f0_readb(t->func, SDIO_CCCR_CCCR, &err);
	sdio_release_host(t->func);
	t->ops++;
	if (err || b != 0x32)
		count_error(t, "CCCR revision", 0, 1, err ?: -EINVAL);
	if (set_window(t, 0))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	/* 512 bytes by CMD52 at spread addresses, checked by CMD53 */
	for (i = 0; i < 512; i++) {
		addr = (i * 127 + rnd(t, 64)) % RAM_SIZE;
		b = rnd(t, 256);
		err = t_writeb(t, b, addr);
		if (err) {
			count_error(t, "CMD52 write", addr, 1, err);
			continue;
		}
		t->shadow[addr] = b;
		t->bytes++;
	}
	verify_block(t, "CMD53 read of CMD52 writes", 0, RAM_SIZE);
	/* and CMD53 writes read back by CMD52 */
	fill_rand(t, t->buf, 4096);
	err = write_blocks(t, 0x3000, t->buf, 4096, 512);
	if (err)
		count_error(t, "CMD53 write", 0x3000, 4096, err);
	for (i = 0; i < 4096; i += 7) {
		err = t_readb(t, 0x3000 + i, &b);
		if (err) {
			count_error(t, "CMD52 read", 0x3000 + i, 1, err);
			continue;
		}
		count_mismatch(t, "CMD52 read of CMD53 writes", 0x3000 + i, &b,
			       t->shadow + 0x3000 + i, 1);
		t->bytes++;
	}
}

static void test_byte(struct sdio_test *t)
{
	unsigned int n, i, off;
	u32 addr;
	int err;

	if (set_window(t, 0))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	for (n = 1; n <= 512; n++) {
		/* written in byte mode, read in block mode */
		addr = (n * 131) % (RAM_SIZE - n);
		off = n % 61;
		fill_rand(t, t->buf + off, n);
		err = cmd53(t, true, addr, true, 0, t->buf + off, n);
		if (err) {
			count_error(t, "byte-mode write", addr, n, err);
			continue;
		}
		memcpy(t->shadow + addr, t->buf + off, n);
		verify_block(t, "block read of a byte-mode write", addr, n);
		/* written in block mode, read in byte mode */
		addr = (n * 257 + 3) % (RAM_SIZE - 1024);
		fill_rand(t, t->buf, 1024);
		err = write_blocks(t, ALIGN_DOWN(addr, 512), t->buf, 1024, 512);
		if (err) {
			count_error(t, "block-mode write", addr, 1024, err);
			continue;
		}
		verify_bytes(t, "byte read of a block-mode write", addr, n,
			     (n * 7) % 63);
	}
	/* random triples: size, address, buffer offset */
	for (i = 0; i < triples; i++) {
		n = 1 + rnd(t, 512);
		addr = rnd(t, RAM_SIZE - n + 1);
		off = rnd(t, 64);
		if (rnd(t, 2)) {
			fill_rand(t, t->buf + off, n);
			err = cmd53(t, true, addr, true, 0, t->buf + off, n);
			if (err) {
				count_error(t, "byte-mode write", addr, n, err);
				continue;
			}
			memcpy(t->shadow + addr, t->buf + off, n);
		} else {
			verify_bytes(t, "byte-mode read", addr, n, off);
		}
	}
	/* every byte the triples wrote, through block mode */
	verify_block(t, "block read after the triples", 0, RAM_SIZE);
}

static void test_block(struct sdio_test *t)
{
	static const unsigned int sizes[] = { 64, 256, 512 };
	static const unsigned int extra[] = { 32, 64, 100, 127, 128, 255, 511 };
	unsigned int s, i, bs, nb, off;
	u32 addr, len;
	int err;

	if (set_window(t, 0))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		bs = sizes[s];
		for (i = 0; i < 16 + ARRAY_SIZE(extra); i++) {
			nb = i < 16 ? i + 1 : extra[i - 16];
			if (nb > max_blocks(t, bs) || nb * bs > RAM_SIZE)
				continue;
			len = nb * bs;
			addr = rnd(t, RAM_SIZE - len + 1);
			off = rnd(t, 32) * 2 + 1;       /* odd buffer offsets */
			err = set_blksz(t, bs);
			if (err) {
				count_error(t, "set block size", bs, 0, err);
				return;
			}
			/* block-mode write, byte-mode read back */
			fill_rand(t, t->buf + off, len);
			err = cmd53(t, true, addr, true, bs, t->buf + off, len);
			if (err) {
				count_error(t, "block-mode write", addr, len, err);
				continue;
			}
			memcpy(t->shadow + addr, t->buf + off, len);
			verify_bytes(t, "byte read of a block-mode write", addr, len, 0);
			/* byte-mode writes, block-mode read */
			fill_rand(t, t->buf, len);
			for (u32 p = 0; p < len; p += 512) {
				u32 l = min(len - p, 512u);

				err = cmd53(t, true, addr + p, true, 0, t->buf + p, l);
				if (err) {
					count_error(t, "byte-mode write", addr + p, l, err);
					break;
				}
				memcpy(t->shadow + addr + p, t->buf + p, l);
			}
			err = set_blksz(t, bs);
			if (err) {
				count_error(t, "set block size", bs, 0, err);
				return;
			}
			err = cmd53(t, false, addr, true, bs, t->buf2 + off, len);
			if (err) {
				count_error(t, "block-mode read", addr, len, err);
				continue;
			}
			count_mismatch(t, "block read of byte-mode writes", addr,
				       t->buf2 + off, t->shadow + addr, len);
		}
	}
}

static void test_fw(struct sdio_test *t)
{
	u32 pos, len, win;
	u64 level;
	int err;

	/* brcmf_sdiod_ramrw: block size 64, 32 KiB per sdio_memcpy_toio */
	fill_rand(t, t->buf, FW_SIZE);
	err = set_blksz(t, 64);
	if (err)
		return count_error(t, "set block size", 64, 0, err);
	for (pos = 0; pos < FW_SIZE; pos += len) {
		win = pos / RAM_SIZE;
		len = min_t(u32, FW_SIZE - pos, FW_CHUNK);
		err = set_window(t, win);
		if (!err) {
			sdio_claim_host(t->func);
			err = sdio_memcpy_toio(t->func, pos % RAM_SIZE,
					       t->buf + pos, len);
			sdio_release_host(t->func);
			t->ops++;
		}
		if (err)
			return count_error(t, "firmware chunk", pos, len, err);
		t->bytes += len;
	}
	/* read back in byte mode, 512 bytes a command */
	for (pos = 0; pos < FW_SIZE; pos += len) {
		len = min_t(u32, FW_SIZE - pos, 512);
		if (pos % RAM_SIZE == 0) {
			err = set_window(t, pos / RAM_SIZE);
			if (err)
				return count_error(t, "window", pos, 1, err);
		}
		len = min_t(u32, len, RAM_SIZE - pos % RAM_SIZE);
		err = cmd53(t, false, pos % RAM_SIZE, true, 0, t->buf2, len);
		if (err)
			return count_error(t, "firmware read-back", pos, len, err);
		count_mismatch(t, "firmware read-back", pos, t->buf2,
			       t->buf + pos, len);
	}
	if (set_window(t, 0))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	/* window 0 changed under the shadow: take it from the firmware */
	memcpy(t->shadow, t->buf, RAM_SIZE);

	/*
	 * The same bytes through the FIFO (fixed address), block size 256:
	 * sdio_writesb's blocks per command (511) ignore the host's
	 * max_req_size, which 511 blocks of 512 bytes exceed on the C driver.
	 */
	err = set_blksz(t, 256);
	if (err)
		return count_error(t, "set block size", 256, 0, err);
	sdio_claim_host(t->func);
	err = sdio_writesb(t->func, REG_FIFO, t->buf, FW_SIZE);
	sdio_release_host(t->func);
	t->ops++;
	if (err)
		return count_error(t, "FIFO write", REG_FIFO, FW_SIZE, err);
	t->bytes += FW_SIZE;
	err = read_reg(t, REG_FIFO_LEVEL, 4, &level);
	if (err || level != FW_SIZE)
		count_error(t, "FIFO level after the write", REG_FIFO_LEVEL,
			    level, err ?: -EINVAL);
	for (pos = 0; pos < FW_SIZE; pos += len) {
		len = min_t(u32, FW_SIZE - pos, 512);
		err = cmd53(t, false, REG_FIFO, false, 0, t->buf2, len);
		if (err)
			return count_error(t, "FIFO read", pos, len, err);
		count_mismatch(t, "FIFO read-back", pos, t->buf2, t->buf + pos,
			       len);
	}
	err = read_reg(t, REG_FIFO_LEVEL, 4, &level);
	if (err || level)
		count_error(t, "FIFO level after the read", REG_FIFO_LEVEL,
			    level, err ?: -EINVAL);
	err = read_reg(t, REG_UNDERRUNS, 4, &level);
	if (err || level)
		count_error(t, "FIFO underruns", REG_UNDERRUNS, level,
			    err ?: -EINVAL);
}

/*
 * brcmf_sdiod_sglist_rw: packets of odd lengths in one request, the last
 * padded so that the whole is a multiple of the block size; here each
 * packet sits at an odd offset in a shared buffer, right after its
 * neighbour (sharing its cache line) or a few guard bytes away.
 */
static void test_sg_one(struct sdio_test *t, bool write, unsigned int bs,
			bool byte_mode)
{
	struct mmc_host *host = t->func->card->host;
	struct scatterlist *sgl = t->sgl;
	unsigned int *lens = t->lens, *offs = t->offs;
	unsigned int nseg, maxseg, i, total, pos, blocks;
	u32 addr;
	int err;

	maxseg = min_t(unsigned int, host->max_segs, SG_MAX);
	nseg = 1 + rnd(t, maxseg);
	total = 0;
	for (i = 0; i < nseg; i++) {
		lens[i] = (1 + rnd(t, byte_mode ? 40 : 800)) | 1;      /* odd */
		total += lens[i];
	}
	if (byte_mode) {
		while (total > 512) {
			total -= lens[nseg - 1];
			nseg--;
		}
		blocks = 0;
	} else {
		/* pad the last packet to the block size */
		unsigned int pad = ALIGN(total, bs) - total;

		lens[nseg - 1] += pad;
		total += pad;
		blocks = total / bs;
		while (blocks > max_blocks(t, bs) ||
		       total > host->max_req_size) {
			total -= lens[nseg - 1];
			nseg--;
			pad = ALIGN(total, bs) - total;
			lens[nseg - 1] += pad;
			total += pad;
			blocks = total / bs;
		}
	}
	for (i = 0; i < nseg; i++)
		if (lens[i] > host->max_seg_size)
			return;         /* the host would not take it */
	/* place them: odd start, then adjacent or 1-5 guard bytes apart */
	memset(t->buf, GUARD, 2 * SG_MAX * 1024);
	pos = 1 + 2 * rnd(t, 16);
	for (i = 0; i < nseg; i++) {
		offs[i] = pos;
		pos += lens[i] + (rnd(t, 2) ? 0 : 1 + rnd(t, 5));
	}
	addr = rnd(t, RAM_SIZE - total + 1);
	sg_init_table(sgl, nseg);
	for (i = 0; i < nseg; i++) {
		if (write)
			fill_rand(t, t->buf + offs[i], lens[i]);
		sg_set_buf(&sgl[i], t->buf + offs[i], lens[i]);
	}
	err = set_blksz(t, byte_mode ? 512 : bs);
	if (err)
		return count_error(t, "set block size", bs, 0, err);
	err = cmd53_sg(t, write, addr, true, byte_mode ? 0 : bs, blocks, total,
		       sgl, nseg);
	if (err)
		return count_error(t, write ? "sg write" : "sg read", addr,
				   total, err);
	if (write) {
		for (i = 0, pos = addr; i < nseg; pos += lens[i], i++)
			memcpy(t->shadow + pos, t->buf + offs[i], lens[i]);
		/* through a linear block read */
		verify_block(t, "block read of an sg write", addr, total);
	} else {
		for (i = 0, pos = addr; i < nseg; pos += lens[i], i++)
			count_mismatch(t, "sg read", pos, t->buf + offs[i],
				       t->shadow + pos, lens[i]);
		/* nothing outside the entries was touched */
		for (i = 0; i < nseg; i++) {
			unsigned int end = offs[i] + lens[i];
			unsigned int next = i + 1 < nseg ? offs[i + 1] : end + 64;
			u8 guard[64];

			memset(guard, GUARD, sizeof(guard));
			if (next > end)
				count_mismatch(t, "guard bytes after an sg entry",
					       end, t->buf + end, guard,
					       min(next - end, 64u));
		}
		if (offs[0] > 0) {
			u8 guard[64];

			memset(guard, GUARD, sizeof(guard));
			count_mismatch(t, "guard bytes before the sg list", 0,
				       t->buf, guard, min(offs[0], 64u));
		}
	}
}

static void test_sg(struct sdio_test *t)
{
	static const unsigned int sizes[] = { 64, 256, 512 };
	unsigned int i;

	if (set_window(t, 0))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	for (i = 0; i < 300; i++)
		test_sg_one(t, i & 1, sizes[i % 3], i % 10 == 9);
	verify_block(t, "block read after the sg lists", 0, RAM_SIZE);
}

/*
 * Whether the card has the function's interrupt pending (CCCR INTx), as a
 * function driver checks its own status: a host may call the handler once
 * more for an interrupt it already delivered (a stale latch), which is
 * counted, not taken for a new one.
 */
static bool irq_pending(struct sdio_test *t, struct sdio_func *func)
{
	int err = 0;
	u8 pending = sdio_f0_readb(func, SDIO_CCCR_INTx, &err);

	if (err) {
		t->irq_ack_failed = true;
		return false;
	}
	if (!(pending & BIT(func->num))) {
		atomic_inc(&t->spurious_calls);
		return false;
	}
	return true;
}

static void sdio_test_irq(struct sdio_func *func)
{
	struct sdio_test *t = sdio_get_drvdata(func);
	u64 now = now_counter_ns(), at = 0;
	unsigned int i;
	int err = 0;
	u8 b;

	if (!irq_pending(t, func))
		return;

	/* the card's assertion time, then the acknowledgement */
	for (i = 0; i < 8 && !err; i++) {
		b = sdio_readb(func, REG_ASSERT_NS + i, &err);
		at |= (u64)b << (8 * i);
	}
	if (!err)
		sdio_writeb(func, 1, REG_IRQ_ACK, &err);
	if (err) {
		t->irq_ack_failed = true;
		return;
	}
	if (t->nlat < ARRAY_SIZE(t->irq_lat_ns))
		t->irq_lat_ns[t->nlat++] = now > at ? now - at : 0;
	atomic_inc(&t->delivered);
	complete(&t->irq_done);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The p-th percentile of the n values in v, sorted: the value at rank
 * ceil(p * n / 100) (nearest rank, counted from 1); 0 without values.  Of
 * 100 values the 99th percentile is the 99th, not the largest.
 */
static u64 percentile(const u64 *v, unsigned int n, unsigned int p)
{
	unsigned int rank = DIV_ROUND_UP(n * p, 100);

	return n ? v[max(rank, 1U) - 1] : 0;
}

/* raises the card's interrupt `us` microseconds from now; the host is claimed */
static int raise_claimed(struct sdio_func *func, u32 us)
{
	int err = 0, i;

	for (i = 0; i < 4 && !err; i++)
		sdio_writeb(func, us >> (8 * i), REG_IRQ_DELAY + i, &err);
	if (!err)
		sdio_writeb(func, 1, REG_IRQ_CTRL, &err);
	return err;
}

static int raise_after(struct sdio_test *t, u32 us)
{
	int err;

	sdio_claim_host(t->func);
	err = raise_claimed(t->func, us);
	sdio_release_host(t->func);
	t->ops += 5;
	return err;
}

/*
 * irqchain's handler: acknowledges the interrupt at the card and raises the
 * next one 0 to 300 us later before it returns, so that the card interrupts
 * again while the host is between its service of this one and the
 * acknowledgement that re-enables it (ack_sdio_irq), or just after.
 */
static void sdio_test_irq_chain(struct sdio_func *func)
{
	struct sdio_test *t = sdio_get_drvdata(func);
	int err = 0;

	if (!irq_pending(t, func))
		return;
	sdio_writeb(func, 1, REG_IRQ_ACK, &err);
	if (err) {
		t->irq_ack_failed = true;
		return;
	}
	atomic_inc(&t->delivered);
	if (t->chain_left) {
		t->chain_left--;
		if (raise_claimed(func, rnd(t, 300)))
			t->irq_ack_failed = true;
		t->ops += 5;
	} else {
		complete(&t->irq_done);
	}
}

/*
 * irqchain: 4 * irqs interrupts, each raised by the handler of the one
 * before (sdio_test_irq_chain): every one delivered, none lost between the
 * host's service and its acknowledgement.
 */
static void test_irq_chain(struct sdio_test *t)
{
	unsigned int n = 4 * irqs;
	u64 raised0, raised1;
	bool timeout = false;
	int err;

	atomic_set(&t->delivered, 0);
	atomic_set(&t->spurious_calls, 0);
	t->irq_ack_failed = false;
	init_completion(&t->irq_done);
	err = read_reg(t, REG_RAISED, 4, &raised0);
	if (err)
		return count_error(t, "raised count", REG_RAISED, 4, err);
	sdio_claim_host(t->func);
	t->chain_left = n - 1;
	err = sdio_claim_irq(t->func, sdio_test_irq_chain);
	if (!err)
		err = raise_claimed(t->func, 100);
	sdio_release_host(t->func);
	if (err)
		return count_error(t, "sdio_claim_irq/raise", 0, 0, err);
	if (!wait_for_completion_timeout(&t->irq_done, msecs_to_jiffies(10000))) {
		timeout = true;
		count_error(t, "interrupt chain stopped", atomic_read(&t->delivered),
			    n, -ETIMEDOUT);
	}
	msleep(50);
	sdio_claim_host(t->func);
	sdio_release_irq(t->func);
	sdio_release_host(t->func);
	err = read_reg(t, REG_RAISED, 4, &raised1);
	if (err)
		count_error(t, "raised count", REG_RAISED, 4, err);
	if (t->irq_ack_failed)
		count_error(t, "acknowledge or raise in the handler", REG_IRQ_ACK, 1, -EIO);
	if (raised1 - raised0 != n || atomic_read(&t->delivered) != n)
		count_error(t, "raised/delivered", n, atomic_read(&t->delivered),
			    -EINVAL);
	pr_info("@@SDIO-IRQCHAIN raised=%llu delivered=%d spurious_calls=%d timeouts=%u\n",
		raised1 - raised0, atomic_read(&t->delivered),
		atomic_read(&t->spurious_calls), timeout);
}

/*
 * The start of an interrupt case: counters zeroed, the interrupt claimed
 * with sdio_test_irq; nonzero (counted) if it could not be claimed.
 */
static int irq_case_start(struct sdio_test *t)
{
	int err;

	atomic_set(&t->delivered, 0);
	atomic_set(&t->spurious_calls, 0);
	t->nlat = 0;
	t->irq_ack_failed = false;
	init_completion(&t->irq_done);
	sdio_claim_host(t->func);
	err = sdio_claim_irq(t->func, sdio_test_irq);
	sdio_release_host(t->func);
	if (err)
		count_error(t, "sdio_claim_irq", 0, 0, err);
	return err;
}

/* The end of one: a moment for anything spurious, then the interrupt released. */
static void irq_case_end(struct sdio_test *t)
{
	msleep(50);
	sdio_claim_host(t->func);
	sdio_release_irq(t->func);
	sdio_release_host(t->func);
}

static void test_irq(struct sdio_test *t)
{
	u64 raised0, raised1, spurious;
	unsigned int i, n = 0, timeouts = 0, during = 0;
	int err;

	err = read_reg(t, REG_RAISED, 4, &raised0);
	if (err)
		return count_error(t, "raised count", REG_RAISED, 4, err);
	if (irq_case_start(t))
		return;
	if (set_window(t, 0))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	for (i = 0; i < 2 * irqs; i++) {
		bool in_xfer = i >= irqs;

		reinit_completion(&t->irq_done);
		err = raise_after(t, in_xfer ? 20 + rnd(t, 200) : 50 + rnd(t, 2000));
		if (err) {
			count_error(t, "raise", REG_IRQ_CTRL, 1, err);
			break;
		}
		n++;
		if (in_xfer) {
			/* a 64 KiB transfer (about 2.7 ms at 4 bits, 50 MHz) runs meanwhile */
			if (set_blksz(t, 512) ||
			    cmd53(t, i & 1, 0, true, 512, t->buf2,
				  min(RAM_SIZE, max_blocks(t, 512) * 512)))
				count_error(t, "transfer during the interrupt", 0,
					    RAM_SIZE, -EIO);
			else if (i & 1)
				memcpy(t->shadow, t->buf2, min(RAM_SIZE, max_blocks(t, 512) * 512));
			else
				count_mismatch(t, "read during the interrupt", 0,
					       t->buf2, t->shadow,
					       min(RAM_SIZE, max_blocks(t, 512) * 512));
			during++;
		}
		if (!wait_for_completion_timeout(&t->irq_done,
						 msecs_to_jiffies(2000))) {
			timeouts++;
			count_error(t, "interrupt not delivered", i, 0, -ETIMEDOUT);
		}
	}
	irq_case_end(t);
	err = read_reg(t, REG_RAISED, 4, &raised1);
	if (err)
		count_error(t, "raised count", REG_RAISED, 4, err);
	if (t->irq_ack_failed)
		count_error(t, "acknowledge in the handler", REG_IRQ_ACK, 1, -EIO);
	spurious = atomic_read(&t->delivered) > raised1 - raised0 ?
		   atomic_read(&t->delivered) - (raised1 - raised0) : 0;
	if (raised1 - raised0 != n || atomic_read(&t->delivered) != n)
		count_error(t, "raised/delivered", n, atomic_read(&t->delivered),
			    -EINVAL);
	sort(t->irq_lat_ns, t->nlat, sizeof(u64), cmp_u64, NULL);
	pr_info("@@SDIO-IRQ raised=%llu delivered=%d during_transfers=%u spurious=%llu timeouts=%u spurious_calls=%d lat_min_ns=%llu lat_median_ns=%llu lat_p99_ns=%llu lat_max_ns=%llu\n",
		raised1 - raised0, atomic_read(&t->delivered), during, spurious,
		timeouts, atomic_read(&t->spurious_calls), t->nlat ? t->irq_lat_ns[0] : 0,
		t->nlat ? t->irq_lat_ns[t->nlat / 2] : 0,
		percentile(t->irq_lat_ns, t->nlat, 99),
		t->nlat ? t->irq_lat_ns[t->nlat - 1] : 0);
}

/*
 * irqbusy: the card's interrupt raised while 64 KiB block-mode reads run back
 * to back until it is delivered (at most 2 s of them), so that the bus is
 * never idle for long: a host that looks for a card interrupt no edge
 * latched only while the bus is idle may not look until the reads stop.
 * Prints @@SDIO-IRQBUSY with the most reads one interrupt waited through.
 */
static void test_irq_busy(struct sdio_test *t)
{
	u32 len = min(RAM_SIZE, max_blocks(t, 512) * 512);
	unsigned int i, n = 0, timeouts = 0, reads, max_reads = 0;
	ktime_t end;
	int err;

	if (irq_case_start(t))
		return;
	if (set_window(t, 0) || set_blksz(t, 512))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	for (i = 0; i < irqs; i++) {
		reinit_completion(&t->irq_done);
		err = raise_after(t, 20 + rnd(t, 200));
		if (err) {
			count_error(t, "raise", REG_IRQ_CTRL, 1, err);
			break;
		}
		n++;
		end = ktime_add_ms(ktime_get(), 2000);
		for (reads = 0; !completion_done(&t->irq_done) &&
		     ktime_before(ktime_get(), end); reads++) {
			if (cmd53(t, false, 0, true, 512, t->buf2, len))
				count_error(t, "read while the interrupt waits",
					    0, len, -EIO);
			else
				count_mismatch(t, "read while the interrupt waits",
					       0, t->buf2, t->shadow, len);
		}
		max_reads = max(max_reads, reads);
		if (!wait_for_completion_timeout(&t->irq_done,
						 msecs_to_jiffies(2000))) {
			timeouts++;
			count_error(t, "interrupt not delivered", i, 0,
				    -ETIMEDOUT);
		}
	}
	irq_case_end(t);
	if (atomic_read(&t->delivered) != n)
		count_error(t, "raised/delivered", n,
			    atomic_read(&t->delivered), -EINVAL);
	sort(t->irq_lat_ns, t->nlat, sizeof(u64), cmp_u64, NULL);
	pr_info("@@SDIO-IRQBUSY raised=%u delivered=%d timeouts=%u max_reads=%u lat_median_ns=%llu lat_max_ns=%llu\n",
		n, atomic_read(&t->delivered), timeouts, max_reads,
		t->nlat ? t->irq_lat_ns[t->nlat / 2] : 0,
		t->nlat ? t->irq_lat_ns[t->nlat - 1] : 0);
}

/*
 * faults: CRC errors and timeouts (injected by the host's controller model
 * while this runs) must reach us as errors, never as wrong data.  A random
 * mix of CMD52 writes and reads and CMD53 byte-mode and block-mode writes
 * and reads (block sizes 64/256/512, up to 32 blocks) on window 0, checked
 * against a copy of our own (t->shadow is taken from the card again at
 * every run): a write that fails leaves its range unknown and is retried
 * until it succeeds; a read that succeeds must match every known byte, and
 * nothing around its buffer may change.  Errors are counted per operation
 * and per kind (response CRC/timeout by cmd.error, data CRC/timeout by
 * data.error).  faults_check, run once the faults are off, rewrites what is
 * still unknown and reads the whole window in block and in byte mode: every
 * byte must match.
 */
enum { FOP_52W, FOP_52R, FOP_BYTEW, FOP_BYTER, FOP_BLKW, FOP_BLKR, FOP_BLKSZ,
       FOP_WINDOW, FOP__N };
static const char *const fop_names[FOP__N] = {
	"cmd52_write", "cmd52_read", "byte_write", "byte_read", "block_write",
	"block_read", "set_blksz", "window",
};
enum { FERR_RESP_CRC, FERR_RESP_TIMEOUT, FERR_DATA_CRC, FERR_DATA_TIMEOUT,
       FERR_OTHER, FERR__N };
static const char *const ferr_names[FERR__N] = {
	"resp_crc", "resp_timeout", "data_crc", "data_timeout", "other",
};
#define FAULT_GUARD     64
#define FAULT_RETRIES   16

static uint fault_ops = 3000;
module_param(fault_ops, uint, 0644);
MODULE_PARM_DESC(fault_ops, "operations of the faults test");

struct faults_state {
	u8 *expect;                     /* what window 0 must hold */
	unsigned long *unknown;         /* bytes a failed write may have changed */
	u64 ops[FOP__N], errs[FOP__N], kinds[FERR__N];
	u64 mismatches, guard, retries, unrecovered, compared;
};
static struct faults_state *fstate;

static int fault_class(int cmd_err, int data_err)
{
	if (cmd_err == -EILSEQ)
		return FERR_RESP_CRC;
	if (cmd_err == -ETIMEDOUT)
		return FERR_RESP_TIMEOUT;
	if (cmd_err)
		return FERR_OTHER;
	if (data_err == -EILSEQ)
		return FERR_DATA_CRC;
	if (data_err == -ETIMEDOUT)
		return FERR_DATA_TIMEOUT;
	return FERR_OTHER;
}

/* counts an operation; err: 0, or the error of the command (cls its kind) */
static int fault_count(struct sdio_test *t, int op, int err, int cls, u32 addr)
{
	struct faults_state *fs = fstate;

	fs->ops[op]++;
	t->ops++;
	if (!err)
		return 0;
	fs->errs[op]++;
	fs->kinds[cls]++;
	t->errors++;
	if (t->errors <= 10 || cls == FERR_OTHER)
		pr_info("sdio_test: faults: %s at 0x%x: error %d (%s)\n",
			fop_names[op], addr, err, ferr_names[cls]);
	return err;
}

/* one CMD52 of our own (no retries): the kind of its error in *cls */
static int fault_cmd52(struct sdio_test *t, bool write, u32 addr, u8 *v,
		       int *cls)
{
	struct mmc_command cmd = {};
	int err;

	cmd.opcode = SD_IO_RW_DIRECT;
	cmd.arg = (write ? 0x80000000 : 0) | t->func->num << 28 |
		  (addr & 0x1ffff) << 9 | (write ? *v : 0);
	cmd.flags = MMC_RSP_SPI_R5 | MMC_RSP_R5 | MMC_CMD_AC;
	sdio_claim_host(t->func);
	err = mmc_wait_for_cmd(t->func->card->host, &cmd, 0);
	sdio_release_host(t->func);
	*cls = fault_class(err, 0);
	if (!err && (cmd.resp[0] & (R5_ERROR | R5_FUNCTION_NUMBER | R5_OUT_OF_RANGE))) {
		err = -EIO;
		*cls = FERR_OTHER;
	}
	if (!err && !write)
		*v = cmd.resp[0] & 0xff;
	return err;
}

/* one CMD53 on a linear buffer (blksz 0: byte mode), its error's kind in *cls */
static int fault_cmd53(struct sdio_test *t, bool write, u32 addr,
		       unsigned int blksz, void *buf, unsigned int bytes,
		       int *cls)
{
	struct mmc_card *card = t->func->card;
	struct mmc_request mrq = {};
	struct mmc_command cmd = {};
	struct mmc_data data = {};
	struct scatterlist sg;

	sg_init_one(&sg, buf, bytes);
	cmd.opcode = SD_IO_RW_EXTENDED;
	cmd.arg = (write ? 0x80000000 : 0) | t->func->num << 28 | 0x04000000 |
		  (addr & 0x1ffff) << 9;
	if (blksz) {
		cmd.arg |= 0x08000000 | bytes / blksz;
		data.blksz = blksz;
		data.blocks = bytes / blksz;
	} else {
		cmd.arg |= bytes == 512 ? 0 : bytes;
		data.blksz = bytes;
		data.blocks = 1;
	}
	cmd.flags = MMC_RSP_SPI_R5 | MMC_RSP_R5 | MMC_CMD_ADTC;
	data.flags = write ? MMC_DATA_WRITE : MMC_DATA_READ;
	data.sg = &sg;
	data.sg_len = 1;
	mrq.cmd = &cmd;
	mrq.data = &data;
	mmc_set_data_timeout(&data, card);
	sdio_claim_host(t->func);
	mmc_wait_for_req(card->host, &mrq);
	sdio_release_host(t->func);
	if (cmd.error || data.error) {
		*cls = fault_class(cmd.error, data.error);
		return cmd.error ?: data.error;
	}
	*cls = FERR_OTHER;
	if (cmd.resp[0] & (R5_ERROR | R5_FUNCTION_NUMBER | R5_OUT_OF_RANGE))
		return -EIO;
	if (data.bytes_xfered != bytes)
		return -EPROTO;
	t->bytes += bytes;
	return 0;
}

/* the card's block size (two CMD52s), retried until it is set */
static int fault_blksz(struct sdio_test *t, unsigned int bs)
{
	int i, err = 0;

	for (i = 0; i < FAULT_RETRIES; i++) {
		err = set_blksz(t, bs);
		if (!fault_count(t, FOP_BLKSZ, err, fault_class(err, 0), bs))
			return 0;
	}
	return err;
}

static int fault_window0(struct sdio_test *t)
{
	int i, err = 0, cls;
	u8 v = 0;

	for (i = 0; i < FAULT_RETRIES; i++) {
		err = fault_cmd52(t, true, REG_WINDOW, &v, &cls);
		if (!fault_count(t, FOP_WINDOW, err, cls, REG_WINDOW))
			return 0;
	}
	return err;
}

/*
 * Write src to [addr, addr + n): CMD52 (n 1, blksz 0 and !byte), byte mode
 * (blksz 0) or block mode; retried until it succeeds.  The range is unknown
 * from the first failure until a write succeeds.
 */
static int fault_write(struct sdio_test *t, int op, u32 addr,
		       unsigned int blksz, const u8 *src, unsigned int n)
{
	struct faults_state *fs = fstate;
	int i, err = 0, cls;
	u8 v;

	for (i = 0; i < FAULT_RETRIES; i++) {
		if (i)
			fs->retries++;
		if (op == FOP_52W) {
			v = *src;
			err = fault_cmd52(t, true, addr, &v, &cls);
		} else {
			memcpy(t->buf2, src, n);
			err = fault_cmd53(t, true, addr, blksz, t->buf2, n, &cls);
		}
		if (!fault_count(t, op, err, cls, addr)) {
			memcpy(fs->expect + addr, src, n);
			bitmap_clear(fs->unknown, addr, n);
			return 0;
		}
		bitmap_set(fs->unknown, addr, n);
	}
	fs->unrecovered++;
	return err;
}

/* compare what a read returned with every known byte */
static void fault_compare(struct sdio_test *t, const char *what, u32 addr,
			  const u8 *got, unsigned int n)
{
	struct faults_state *fs = fstate;
	unsigned int i, bad = 0, first = 0;

	for (i = 0; i < n; i++) {
		if (test_bit(addr + i, fs->unknown))
			continue;
		fs->compared++;
		if (got[i] != fs->expect[addr + i]) {
			if (!bad++)
				first = i;
		}
	}
	if (bad) {
		if (fs->mismatches < 20 * 512)
			pr_err("sdio_test: faults: %s: %u of %u bytes differ at 0x%x (first +%u: %02x, want %02x)\n",
			       what, bad, n, addr, first, got[first],
			       fs->expect[addr + first]);
		fs->mismatches += bad;
		t->mismatches += bad;
	}
}

/* a read into t->buf2 + FAULT_GUARD, guard bytes on both sides checked */
static int fault_read(struct sdio_test *t, int op, u32 addr,
		      unsigned int blksz, unsigned int n)
{
	struct faults_state *fs = fstate;
	u8 *p = t->buf2 + FAULT_GUARD, guard[FAULT_GUARD];
	int err, cls;
	u8 v = 0;

	memset(t->buf2, GUARD, n + 2 * FAULT_GUARD);
	if (op == FOP_52R) {
		err = fault_cmd52(t, false, addr, &v, &cls);
		if (!err)
			*p = v;
	} else {
		err = fault_cmd53(t, false, addr, blksz, p, n, &cls);
	}
	memset(guard, GUARD, sizeof(guard));
	if (memcmp(t->buf2, guard, FAULT_GUARD) ||
	    memcmp(p + n, guard, FAULT_GUARD)) {
		pr_err("sdio_test: faults: %s at 0x%x (%u bytes, error %d): guard bytes changed\n",
		       fop_names[op], addr, n, err);
		fs->guard++;
		t->mismatches++;
	}
	if (fault_count(t, op, err, cls, addr))
		return err;
	fault_compare(t, fop_names[op], addr, p, n);
	return 0;
}

static void test_faults(struct sdio_test *t)
{
	static const unsigned int sizes[] = { 64, 256, 512 };
	struct faults_state *fs;
	unsigned int i, n, bs, cur_bs = 0;
	u32 addr, pos;
	int op;

	if (!fstate) {
		fstate = devm_kzalloc(&t->func->dev, sizeof(*fstate), GFP_KERNEL);
		if (!fstate)
			return count_error(t, "faults state", 0, 0, -ENOMEM);
		fstate->expect = devm_kzalloc(&t->func->dev, RAM_SIZE, GFP_KERNEL);
		fstate->unknown = devm_bitmap_zalloc(&t->func->dev, RAM_SIZE,
						     GFP_KERNEL);
		if (!fstate->expect || !fstate->unknown) {
			fstate = NULL;
			return count_error(t, "faults state", 0, 0, -ENOMEM);
		}
	}
	fs = fstate;
	memset(fs->ops, 0, sizeof(fs->ops));
	memset(fs->errs, 0, sizeof(fs->errs));
	memset(fs->kinds, 0, sizeof(fs->kinds));
	fs->mismatches = fs->guard = fs->retries = fs->unrecovered = 0;
	fs->compared = 0;
	bitmap_fill(fs->unknown, RAM_SIZE);

	/* the whole window written first (4 KiB block-mode writes) */
	if (fault_window0(t) || fault_blksz(t, 512))
		goto out;
	cur_bs = 512;
	for (pos = 0; pos < RAM_SIZE; pos += 4096) {
		fill_rand(t, t->buf, 4096);
		fault_write(t, FOP_BLKW, pos, 512, t->buf, 4096);
	}
	for (i = 0; i < fault_ops; i++) {
		op = rnd(t, 6);
		switch (op) {
		case FOP_52W:
		case FOP_52R:
			n = 1;
			bs = 0;
			break;
		case FOP_BYTEW:
		case FOP_BYTER:
			n = 1 + rnd(t, 512);
			bs = 0;
			break;
		default:
			bs = sizes[rnd(t, ARRAY_SIZE(sizes))];
			n = bs * (1 + rnd(t, min(32u, max_blocks(t, bs))));
			if (bs != cur_bs) {
				if (fault_blksz(t, bs)) {
					cur_bs = 0;
					continue;
				}
				cur_bs = bs;
			}
			break;
		}
		addr = rnd(t, RAM_SIZE - n + 1);
		if (op == FOP_52W || op == FOP_BYTEW || op == FOP_BLKW) {
			fill_rand(t, t->buf, n);
			fault_write(t, op, addr, bs, t->buf, n);
		} else {
			fault_read(t, op, addr, bs, n);
		}
	}
out:
	/* run_tests' read of the shadow before this, with the faults on */
	pr_info("@@SDIO-FAULTS preamble_errors=%llu ops=%llu", t->all_errors,
		t->ops);
	for (i = 0; i < FOP__N; i++)
		pr_cont(" %s=%llu/%llu", fop_names[i], fs->ops[i], fs->errs[i]);
	for (i = 0; i < FERR__N; i++)
		pr_cont(" %s=%llu", ferr_names[i], fs->kinds[i]);
	pr_cont(" mismatches=%llu guard=%llu compared=%llu write_retries=%llu unrecovered=%llu unknown=%u\n",
		fs->mismatches, fs->guard, fs->compared, fs->retries,
		fs->unrecovered, bitmap_weight(fs->unknown, RAM_SIZE));
}

/*
 * faults_check (faults off): what the faults test left unknown rewritten,
 * then every byte of window 0 read in block mode and in byte mode.
 */
static void test_faults_check(struct sdio_test *t)
{
	struct faults_state *fs = fstate;
	unsigned int unknown, start, end, len;
	u32 pos;
	int err;

	if (!fs)
		return count_error(t, "faults_check without faults", 0, 0, -EINVAL);
	unknown = bitmap_weight(fs->unknown, RAM_SIZE);
	if (set_window(t, 0))
		count_error(t, "window", REG_WINDOW, 1, -EIO);
	for_each_set_bitrange(start, end, fs->unknown, RAM_SIZE) {
		for (pos = start; pos < end; pos += len) {
			len = min(end - pos, 512u);
			fill_rand(t, t->buf, len);
			memcpy(t->buf2, t->buf, len);
			t->ops++;
			err = cmd53(t, true, pos, true, 0, t->buf2, len);
			if (err) {
				count_error(t, "rewrite", pos, len, err);
				continue;
			}
			memcpy(fs->expect + pos, t->buf, len);
		}
	}
	bitmap_zero(fs->unknown, RAM_SIZE);
	/* t->shadow is what verify_block and verify_bytes compare with */
	memcpy(t->shadow, fs->expect, RAM_SIZE);
	verify_block(t, "block read after the faults", 0, RAM_SIZE);
	verify_bytes(t, "byte read after the faults", 0, RAM_SIZE, 1);
	pr_info("@@SDIO-FAULTS-CHECK unknown=%u mismatches=%llu errors=%llu\n",
		unknown, t->mismatches, t->errors);
}

/*
 * tests that "all" leaves out: the faults tests need the host to inject
 * faults, bench is make bench's
 */
static bool explicit_only(const char *name)
{
	return !strcmp(name, "faults") || !strcmp(name, "faults_check") ||
	       !strcmp(name, "bench") || !strcmp(name, "irqbusy");
}

/* ---- bench: timed rows for make bench ------------------------------------ */

static uint bench_ms = 1000;
module_param(bench_ms, uint, 0644);
MODULE_PARM_DESC(bench_ms, "bench: virtual milliseconds of commands per row");
static uint bench_irqs = 1000;
module_param(bench_irqs, uint, 0644);
MODULE_PARM_DESC(bench_irqs, "bench: card interrupts raised idle for the latency rows (at most 2048)");

#define BENCH_SG_ENTRIES        64
#define BENCH_SG_LEN            1024
#define BENCH_SG_STRIDE         1088    /* packets apart, as skbs are */
#define BENCH_SRC               (256 * 1024)

/*
 * One row: value with two decimals, MiB/s of bytes or ops/s, over the
 * virtual time spent inside the host calls (the checks are not timed).
 */
static void bench_print(const char *name, bool mib, u64 ops, u64 bytes,
			u64 reqs, u64 ns)
{
	u64 v = 0;
	u32 cents;

	if (ns)
		v = mib ? mul_u64_u64_div_u64(bytes, 100ULL * NSEC_PER_SEC, ns << 20)
			: mul_u64_u64_div_u64(ops, 100ULL * NSEC_PER_SEC, ns);
	pr_info("@@SDIO-BENCH name=%s value=%llu.%02u unit=%s ops=%llu bytes=%llu requests=%llu virt_ns=%llu\n",
		name, div_u64_rem(v, 100, &cents), cents, mib ? "MiB/s" : "ops/s", ops,
		bytes, reqs, ns);
}

/* a source for the next write: the random buffer at a moving offset */
static u8 *bench_src(struct sdio_test *t, u64 i, u32 span)
{
	return t->buf + ((u32)i * 4100u) % (BENCH_SRC - span) / 4 * 4;
}

/* sdio_memcpy_toio/fromio of size bytes, block size 512, as brcmfmac */
static void bench_memcpy(struct sdio_test *t, const char *name, bool write,
			 u32 size)
{
	u64 budget = (u64)bench_ms * NSEC_PER_MSEC, ns = 0, ops = 0, t0;
	u32 addr = 0;
	u8 *src;
	int err;

	err = set_blksz(t, 512);
	if (err)
		return count_error(t, "set block size", 512, 0, err);
	while (ns < budget) {
		src = bench_src(t, ops, size);
		t0 = ktime_get_ns();
		sdio_claim_host(t->func);
		if (write)
			err = sdio_memcpy_toio(t->func, addr, src, size);
		else
			err = sdio_memcpy_fromio(t->func, t->buf2, addr, size);
		sdio_release_host(t->func);
		ns += ktime_get_ns() - t0;
		t->ops++;
		if (err)
			return count_error(t, name, addr, size, err);
		if (write)
			memcpy(t->shadow + addr, src, size);
		else
			count_mismatch(t, name, addr, t->buf2, t->shadow + addr,
				       size);
		t->bytes += size;
		ops++;
		addr = (addr + size) % RAM_SIZE;
	}
	if (write)
		verify_block(t, name, 0, RAM_SIZE);
	bench_print(name, true, ops, ops * size, 0, ns);
}

/*
 * 64 KiB as 64 packets of 1 KiB, each its own scatterlist entry, block
 * size 512: brcmf_sdiod_sglist_rw's requests, as many entries each as the
 * host takes (max_segs, max_req_size), through mmc_wait_for_req.
 */
static void bench_sg(struct sdio_test *t, const char *name, bool write)
{
	struct mmc_host *host = t->func->card->host;
	unsigned int maxseg = min_t(unsigned int, host->max_segs, BENCH_SG_ENTRIES);
	unsigned int maxreq = min(host->max_req_size, max_blocks(t, 512) * 512);
	u64 budget = (u64)bench_ms * NSEC_PER_MSEC, ns = 0, ops = 0, reqs = 0, t0;
	u32 span = BENCH_SG_ENTRIES * BENCH_SG_STRIDE, addr;
	unsigned int i, k, n;
	u8 *base;
	int err;

	if (BENCH_SG_LEN > host->max_seg_size || BENCH_SG_LEN > maxreq)
		return count_error(t, "host limits for 1 KiB entries", 0, 0, -EINVAL);
	err = set_blksz(t, 512);
	if (err)
		return count_error(t, "set block size", 512, 0, err);
	while (ns < budget) {
		base = write ? bench_src(t, ops, span) : t->buf2;
		for (i = 0; i < BENCH_SG_ENTRIES; i += n) {
			for (n = 0; i + n < BENCH_SG_ENTRIES && n < maxseg &&
			     (n + 1) * BENCH_SG_LEN <= maxreq; n++)
				;
			sg_init_table(t->sgl, n);
			for (k = 0; k < n; k++)
				sg_set_buf(&t->sgl[k],
					   base + (i + k) * BENCH_SG_STRIDE,
					   BENCH_SG_LEN);
			addr = i * BENCH_SG_LEN;
			t0 = ktime_get_ns();
			err = cmd53_sg(t, write, addr, true, 512,
				       n * BENCH_SG_LEN / 512, n * BENCH_SG_LEN,
				       t->sgl, n);
			ns += ktime_get_ns() - t0;
			reqs++;
			if (err)
				return count_error(t, name, addr,
						   n * BENCH_SG_LEN, err);
		}
		for (i = 0; i < BENCH_SG_ENTRIES; i++) {
			u8 *p = base + i * BENCH_SG_STRIDE;

			addr = i * BENCH_SG_LEN;
			if (write)
				memcpy(t->shadow + addr, p, BENCH_SG_LEN);
			else
				count_mismatch(t, name, addr, p,
					       t->shadow + addr, BENCH_SG_LEN);
		}
		ops++;
	}
	if (write)
		verify_block(t, name, 0, RAM_SIZE);
	bench_print(name, true, ops, ops * BENCH_SG_ENTRIES * BENCH_SG_LEN,
		    reqs, ns);
}

/* 64-byte byte-mode CMD53s: a write, then its read-back, ops/s of both */
static void bench_byte64(struct sdio_test *t)
{
	u64 budget = (u64)bench_ms * NSEC_PER_MSEC, ns = 0, ops = 0, t0;
	u32 addr = 0;
	u8 *src;
	int err;

	while (ns < budget) {
		src = bench_src(t, ops, 64);
		t0 = ktime_get_ns();
		err = cmd53(t, true, addr, true, 0, src, 64);
		ns += ktime_get_ns() - t0;
		if (err)
			return count_error(t, "byte64 write", addr, 64, err);
		memcpy(t->shadow + addr, src, 64);
		t0 = ktime_get_ns();
		err = cmd53(t, false, addr, true, 0, t->buf2, 64);
		ns += ktime_get_ns() - t0;
		if (err)
			return count_error(t, "byte64 read", addr, 64, err);
		count_mismatch(t, "byte64 read", addr, t->buf2, t->shadow + addr, 64);
		ops += 2;
		addr = (addr + 64 + 4) % (RAM_SIZE - 64);
	}
	bench_print("byte64", false, ops, ops * 64, ops, ns);
}

/* CMD52: a write, then its read-back, ops/s of both */
static void bench_cmd52(struct sdio_test *t)
{
	u64 budget = (u64)bench_ms * NSEC_PER_MSEC, ns = 0, ops = 0, t0;
	u32 addr = 0;
	u8 v, b;
	int err;

	while (ns < budget) {
		v = t->buf[(u32)ops % BENCH_SRC];
		t0 = ktime_get_ns();
		err = t_writeb(t, v, addr);
		ns += ktime_get_ns() - t0;
		if (err)
			return count_error(t, "CMD52 write", addr, 1, err);
		t->shadow[addr] = v;
		t0 = ktime_get_ns();
		err = t_readb(t, addr, &b);
		ns += ktime_get_ns() - t0;
		if (err)
			return count_error(t, "CMD52 read", addr, 1, err);
		count_mismatch(t, "CMD52 read", addr, &b, t->shadow + addr, 1);
		ops += 2;
		addr = (addr + 61) % RAM_SIZE;
	}
	bench_print("cmd52", false, ops, ops, ops, ns);
}

/* a latency row of n interrupts: ns in us, one decimal */
static void bench_print_us(const char *name, u64 ns, unsigned int n)
{
	u32 tenth;
	u64 us = div_u64_rem(div_u64(ns, 100), 10, &tenth);

	pr_info("@@SDIO-BENCH name=%s value=%llu.%u unit=us ops=%u\n", name, us, tenth, n);
}

/*
 * the card's interrupt raised idle: latency to the handler, median, p99
 * (nearest rank) and maximum
 */
static void bench_irq(struct sdio_test *t)
{
	unsigned int i, n = bench_irqs;
	u64 raised0, raised1;
	int err;

	if (n > ARRAY_SIZE(t->irq_lat_ns))
		return count_error(t, "bench_irqs above the latencies kept", n,
				   ARRAY_SIZE(t->irq_lat_ns), -EINVAL);

	atomic_set(&t->delivered, 0);
	atomic_set(&t->spurious_calls, 0);
	t->nlat = 0;
	t->irq_ack_failed = false;
	init_completion(&t->irq_done);
	err = read_reg(t, REG_RAISED, 4, &raised0);
	if (err)
		return count_error(t, "raised count", REG_RAISED, 4, err);
	sdio_claim_host(t->func);
	err = sdio_claim_irq(t->func, sdio_test_irq);
	sdio_release_host(t->func);
	if (err)
		return count_error(t, "sdio_claim_irq", 0, 0, err);
	for (i = 0; i < n; i++) {
		reinit_completion(&t->irq_done);
		err = raise_after(t, 50 + rnd(t, 2000));
		if (err) {
			count_error(t, "raise", REG_IRQ_CTRL, 1, err);
			break;
		}
		if (!wait_for_completion_timeout(&t->irq_done,
						 msecs_to_jiffies(2000)))
			count_error(t, "interrupt not delivered", i, 0, -ETIMEDOUT);
	}
	msleep(50);
	sdio_claim_host(t->func);
	sdio_release_irq(t->func);
	sdio_release_host(t->func);
	err = read_reg(t, REG_RAISED, 4, &raised1);
	if (err)
		count_error(t, "raised count", REG_RAISED, 4, err);
	if (t->irq_ack_failed)
		count_error(t, "acknowledge in the handler", REG_IRQ_ACK, 1, -EIO);
	if (raised1 - raised0 != i || atomic_read(&t->delivered) != i ||
	    t->nlat != i)
		count_error(t, "raised/delivered", i, atomic_read(&t->delivered),
			    -EINVAL);
	if (!t->nlat)
		return;
	sort(t->irq_lat_ns, t->nlat, sizeof(u64), cmp_u64, NULL);
	bench_print_us("irq-median", t->irq_lat_ns[t->nlat / 2], t->nlat);
	bench_print_us("irq-p99", percentile(t->irq_lat_ns, t->nlat, 99), t->nlat);
	bench_print_us("irq-max", t->irq_lat_ns[t->nlat - 1], t->nlat);
}

static void test_bench(struct sdio_test *t)
{
	if (set_window(t, 0))
		return count_error(t, "window", REG_WINDOW, 1, -EIO);
	fill_rand(t, t->buf, BENCH_SRC);
	bench_memcpy(t, "blk2k-write", true, 2048);
	bench_memcpy(t, "blk2k-read", false, 2048);
	bench_memcpy(t, "blk64k-write", true, RAM_SIZE);
	bench_memcpy(t, "blk64k-read", false, RAM_SIZE);
	bench_sg(t, "sg64k-write", true);
	bench_sg(t, "sg64k-read", false);
	bench_byte64(t);
	bench_cmd52(t);
	bench_irq(t);
}

static const struct {
	const char *name;
	void (*fn)(struct sdio_test *t);
} tests[] = {
	{ "cmd52", test_cmd52 },
	{ "byte", test_byte },
	{ "block", test_block },
	{ "fw", test_fw },
	{ "sg", test_sg },
	{ "irq", test_irq },
	{ "irqchain", test_irq_chain },
	{ "irqbusy", test_irq_busy },
	{ "faults", test_faults },
	{ "faults_check", test_faults_check },
	{ "bench", test_bench },
};

static bool wanted(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!strcmp(list, "all") || !strncmp(list, "all\n", 4))
		return !explicit_only(name);
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',' || p[-1] == ' ') &&
		    (p[n] == 0 || p[n] == ',' || p[n] == ' ' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}

static void run_tests(struct sdio_test *t, const char *list)
{
	unsigned int i, n = 0;
	u64 start;

	mutex_lock(&t->lock);
	t->all_mismatches = t->all_errors = 0;
	/* the shadow starts from what the card holds */
	t->mismatches = t->errors = 0;
	if (set_window(t, 0) || set_blksz(t, 512) ||
	    cmd53(t, false, 0, true, 512, t->shadow,
		  min(RAM_SIZE, max_blocks(t, 512) * 512)) ||
	    (max_blocks(t, 512) * 512 < RAM_SIZE &&
	     cmd53(t, false, max_blocks(t, 512) * 512, true, 512,
		   t->shadow + max_blocks(t, 512) * 512,
		   RAM_SIZE - max_blocks(t, 512) * 512)))
		t->all_errors++;
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (!wanted(list, tests[i].name))
			continue;
		t->ops = t->bytes = t->mismatches = t->errors = 0;
		start = ktime_get_ns();
		tests[i].fn(t);
		pr_info("@@SDIO-RESULT test=%s ops=%llu bytes=%llu mismatches=%llu errors=%llu virt_ms=%llu\n",
			tests[i].name, t->ops, t->bytes, t->mismatches,
			t->errors, div_u64(ktime_get_ns() - start, NSEC_PER_MSEC));
		t->all_mismatches += t->mismatches;
		t->all_errors += t->errors;
		n++;
	}
	pr_info("@@SDIO-DONE tests=%u mismatches=%llu errors=%llu\n", n,
		t->all_mismatches, t->all_errors);
	mutex_unlock(&t->lock);
}

static ssize_t run_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	struct sdio_test *t = file_inode(file)->i_private;
	char list[128];

	if (count >= sizeof(list))
		return -EINVAL;
	if (copy_from_user(list, ubuf, count))
		return -EFAULT;
	list[count] = 0;
	run_tests(t, list);
	return count;
}

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
};

/*
 * debugfs cmd52: "FN ADDR" reads, "FN ADDR VAL" writes any register of any
 * function (CCCR included, which sdio_f0_writeb refuses), by a CMD52 of our
 * own; reading the file gives the last result.  For tests of the host's
 * handling of the card's interrupt without a handler claiming it.
 */
static ssize_t cmd52_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	struct sdio_test *t = file_inode(file)->i_private;
	struct mmc_command cmd = {};
	unsigned int fn, addr, val;
	char line[64];
	int n, err;

	if (count >= sizeof(line))
		return -EINVAL;
	if (copy_from_user(line, ubuf, count))
		return -EFAULT;
	line[count] = 0;
	n = sscanf(line, "%u %i %i", &fn, &addr, &val);
	if (n < 2 || fn > 7 || addr > 0x1ffff || (n == 3 && val > 0xff))
		return -EINVAL;
	cmd.opcode = SD_IO_RW_DIRECT;
	cmd.arg = (n == 3 ? 0x80000000 : 0) | fn << 28 | addr << 9 |
		  (n == 3 ? val : 0);
	cmd.flags = MMC_RSP_SPI_R5 | MMC_RSP_R5 | MMC_CMD_AC;
	sdio_claim_host(t->func);
	err = mmc_wait_for_cmd(t->func->card->host, &cmd, 0);
	sdio_release_host(t->func);
	if (!err && (cmd.resp[0] & (R5_ERROR | R5_FUNCTION_NUMBER | R5_OUT_OF_RANGE)))
		err = -EIO;
	t->cmd52_result = err ?: (cmd.resp[0] & 0xff);
	return err ?: count;
}

static ssize_t cmd52_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	struct sdio_test *t = file_inode(file)->i_private;
	char line[16];
	int n = scnprintf(line, sizeof(line), "%d\n", t->cmd52_result);

	return simple_read_from_buffer(ubuf, count, ppos, line, n);
}

static const struct file_operations cmd52_fops = {
	.owner = THIS_MODULE,
	.write = cmd52_write,
	.read = cmd52_read,
};

/* debugfs xfer: a write reads 64 KiB (512-byte blocks) from window 0 */
static ssize_t xfer_write(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	struct sdio_test *t = file_inode(file)->i_private;
	u32 len = min(RAM_SIZE, max_blocks(t, 512) * 512);
	int err;

	mutex_lock(&t->lock);
	err = set_blksz(t, 512) ?: cmd53(t, false, 0, true, 512, t->buf2, len);
	mutex_unlock(&t->lock);
	return err ?: count;
}

static const struct file_operations xfer_fops = {
	.owner = THIS_MODULE,
	.write = xfer_write,
};

/*
 * debugfs claim: "1" claims the card's interrupt with the counting handler
 * and keeps it (for tests that tear the host down under it), "0" releases
 * it; reading gives the interrupts delivered since the claim.
 */
static ssize_t claim_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	struct sdio_test *t = file_inode(file)->i_private;
	bool on;
	int err = kstrtobool_from_user(ubuf, count, &on);

	if (err)
		return err;
	mutex_lock(&t->lock);
	sdio_claim_host(t->func);
	if (on && !t->claimed) {
		atomic_set(&t->delivered, 0);
		init_completion(&t->irq_done);
		err = sdio_claim_irq(t->func, sdio_test_irq);
		t->claimed = !err;
	} else if (!on && t->claimed) {
		err = sdio_release_irq(t->func);
		t->claimed = false;
	}
	sdio_release_host(t->func);
	mutex_unlock(&t->lock);
	return err ?: count;
}

static ssize_t claim_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	struct sdio_test *t = file_inode(file)->i_private;
	char line[16];
	int n = scnprintf(line, sizeof(line), "%d\n", atomic_read(&t->delivered));

	return simple_read_from_buffer(ubuf, count, ppos, line, n);
}

static const struct file_operations claim_fops = {
	.owner = THIS_MODULE,
	.write = claim_write,
	.read = claim_read,
};

static int sdio_test_probe(struct sdio_func *func,
			   const struct sdio_device_id *id)
{
	struct sdio_test *t;
	int err;

	t = devm_kzalloc(&func->dev, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->func = func;
	mutex_init(&t->lock);
	prandom_seed_state(&t->rnd, seed);
	t->shadow = devm_kzalloc(&func->dev, RAM_SIZE, GFP_KERNEL);
	t->buf = devm_kzalloc(&func->dev, 256 * 1024, GFP_KERNEL);
	t->buf2 = devm_kzalloc(&func->dev, 256 * 1024, GFP_KERNEL);
	if (!t->shadow || !t->buf || !t->buf2)
		return -ENOMEM;
	sdio_set_drvdata(func, t);

	sdio_claim_host(func);
	err = sdio_enable_func(func);
	sdio_release_host(func);
	if (err)
		return err;
	dev_info(&func->dev, "host %s: max_segs %u max_seg_size %u max_req_size %u max_blk_count %u caps 0x%x\n",
		 mmc_hostname(func->card->host), func->card->host->max_segs,
		 func->card->host->max_seg_size, func->card->host->max_req_size,
		 func->card->host->max_blk_count, func->card->host->caps);

	t->dir = debugfs_create_dir("sdio_test", NULL);
	debugfs_create_file("run", 0200, t->dir, t, &run_fops);
	debugfs_create_file("cmd52", 0600, t->dir, t, &cmd52_fops);
	debugfs_create_file("xfer", 0200, t->dir, t, &xfer_fops);
	debugfs_create_file("claim", 0600, t->dir, t, &claim_fops);
	if (run && *run)
		run_tests(t, run);
	return 0;
}

static void sdio_test_remove(struct sdio_func *func)
{
	struct sdio_test *t = sdio_get_drvdata(func);

	debugfs_remove_recursive(t->dir);
	sdio_claim_host(func);
	if (t->claimed)
		sdio_release_irq(func);
	sdio_disable_func(func);
	sdio_release_host(func);
}

static const struct sdio_device_id sdio_test_ids[] = {
	{ SDIO_DEVICE(VENDOR, DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(sdio, sdio_test_ids);

static struct sdio_driver sdio_test_driver = {
	.name = "sdio_test",
	.id_table = sdio_test_ids,
	.probe = sdio_test_probe,
	.remove = sdio_test_remove,
};
module_sdio_driver(sdio_test_driver);

MODULE_DESCRIPTION("Test function driver for the emulated board's SDIO card");
MODULE_LICENSE("GPL");
