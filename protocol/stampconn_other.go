//go:build !linux

package protocol

import "net"

// stampConn is a connection with kernel receive stamps; elsewhere than
// Linux there are none, and no stampConn is ever made.
type stampConn struct {
	net.Conn
}

// stampable reports false: only Linux stamps are read.
func stampable() bool { return false }

// newStampConn returns nil: the caller keeps conn on the user-space clock.
func newStampConn(net.Conn) *stampConn { return nil }

func (c *stampConn) rxNano() int64    { return 0 }
func (c *stampConn) wroteNano() int64 { return 0 }
