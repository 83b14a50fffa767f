//go:build linux

package protocol

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rxStampFlags asks for software receive timestamps, reported to this
// socket: the instant the kernel took each segment off the network device.
const rxStampFlags = unix.SOF_TIMESTAMPING_RX_SOFTWARE | unix.SOF_TIMESTAMPING_SOFTWARE

// oobWords holds the control messages of one recvmsg: an scm_timestamping
// (three timespecs, 48 bytes, plus a 16-byte header) with room to spare.
// Words, not bytes, so the buffer is aligned for the cmsghdr view.
const oobWords = 16

// stampConn is a TCP connection whose reads carry the kernel's receive
// timestamp. It reads with recvmsg through the socket's syscall.RawConn,
// so the runtime's poller still waits for readability and applies the
// connection's deadlines, and net/http (and TLS above it) see an ordinary
// net.Conn.
//
// Which read delivered the bytes a body Read returns: net/http reads the
// conn through a bufio.Reader and a chunked decoder, and TLS through its
// own record buffer. Each of them serves a Read from bytes already
// buffered without reading again, and reads the conn only once those are
// used up (a chunked body Read stops early rather than block for a new
// chunk once it has data). So the bytes a body Read returns were
// delivered by the conn's most recent read, whose stamp rxNano holds: at
// the time of that read or earlier. A read that delivers several
// segments carries the stamp of the last one, the instant all its bytes
// had arrived. TestStampedReadsLate proves it with a server that sends at
// known instants and a client that reads late on purpose.
type stampConn struct {
	net.Conn
	rc   syscall.RawConn
	recv func(fd uintptr) bool // c.recvOnce, bound once: a Read allocates nothing

	// The read in flight, touched only by the goroutine inside Read.
	msg unix.Msghdr
	iov unix.Iovec
	oob [oobWords]uint64
	n   int
	err error

	rx    atomic.Int64 // realtime ns of the last stamped read, 0 before one
	wrote atomic.Int64 // monoNow after the last Write returned, 0 before one
}

// stampable reports whether this system stamps received TCP segments for
// a socket that asks. The first call sets the option on a socket that is
// then kept open for the life of the process: Linux stamps incoming
// packets only while some socket wants stamps, and turns that on in a
// deferred work item, so without a socket that holds it on, every run's
// first connections (and any connection opened after all others closed)
// would get their first segments unstamped.
var stampable = sync.OnceValue(func() bool {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, rxStampFlags) != nil {
		unix.Close(fd)
		return false
	}
	return true // fd stays open on purpose
})

// newStampConn turns on receive stamps for conn. It returns nil when conn
// is not TCP or the kernel refuses the option; the caller then keeps conn
// as it is, on the user-space clock.
func newStampConn(conn net.Conn) *stampConn {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPING, rxStampFlags)
	}); err != nil || serr != nil {
		return nil
	}
	c := &stampConn{Conn: conn, rc: rc}
	c.recv = c.recvOnce
	c.msg.Iov = &c.iov
	c.msg.SetIovlen(1)
	return c
}

// Read reads like net.Conn's Read and keeps the kernel's stamp of it.
func (c *stampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.iov.Base = &p[0]
	c.iov.SetLen(len(p))
	c.msg.Control = (*byte)(unsafe.Pointer(&c.oob[0]))
	c.msg.SetControllen(len(c.oob) * 8)
	c.n, c.err = 0, nil
	err := c.rc.Read(c.recv)
	c.iov.Base = nil // keep no reference to the caller's buffer
	switch {
	case err != nil: // a deadline, or the conn was closed
		return 0, err
	case c.err != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(),
			Err: os.NewSyscallError("recvmsg", c.err)}
	case c.n == 0:
		return 0, io.EOF
	}
	return c.n, nil
}

// recvOnce is the RawConn callback: one recvmsg, false to wait for the
// socket to become readable.
func (c *stampConn) recvOnce(fd uintptr) bool {
	for {
		n, _, errno := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), 0)
		switch errno {
		case 0:
			c.n = int(n)
			if ns := rxStamp(c.control()); ns != 0 {
				c.rx.Store(ns)
			}
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		c.err = errno
		return true
	}
}

// control is the control data the last recvmsg filled in.
func (c *stampConn) control() []byte {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&c.oob[0])), len(c.oob)*8)
	return b[:min(int(c.msg.Controllen), len(b))]
}

// rxStamp finds the software receive stamp (the first of the three
// timespecs of SCM_TIMESTAMPING) in oob, in realtime nanoseconds; 0 when
// there is none (a read of 0 bytes, or a truncated message).
func rxStamp(oob []byte) int64 {
	hdr := unix.CmsgLen(0)
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPING && l >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano()
		}
		oob = oob[min(unix.CmsgSpace(l-hdr), len(oob)):]
	}
	return 0
}

// rxNano implements rxSource.
func (c *stampConn) rxNano() int64 { return c.rx.Load() }

// Write writes like net.Conn's Write and notes when it returned: the
// instant the bytes were in the kernel's hands.
func (c *stampConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.wrote.Store(monoNow())
	return n, err
}

// wroteNano is monoNow after the last Write returned, 0 before one.
func (c *stampConn) wroteNano() int64 { return c.wrote.Load() }
