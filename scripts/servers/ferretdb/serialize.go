package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
)

// FerretDB 1.x runs a write command as read-then-write without isolation
// (FerretDB/FerretDB#2168): two concurrent findAndModify calls guarded by the same
// {_id, status: "pending"} filter both succeed, and concurrent $inc updates lose increments.
// The service relies on MongoDB's single-document atomicity (guarded state moves, stock
// that never goes below zero), so the embedded server puts this front door before FerretDB:
// it forwards the wire protocol unchanged, but lets a write command run only when no other
// command runs (reads run side by side). Each write is then atomic, as on MongoDB.

// unlocked lists the commands that touch no data: handshakes, the driver's server monitor
// (hello every few seconds), authentication. They pass without the lock, because a Go RWMutex
// makes new readers wait behind a waiting writer, and a writer waits behind every running read:
// a long collection scan would otherwise hold the monitor's hello past its timeout, and the
// driver then drops every connection of its pool (PoolClearedOnNetworkError) mid-request.
var unlocked = map[string]bool{
	"hello": true, "isMaster": true, "ismaster": true, "ping": true, "buildInfo": true,
	"buildinfo": true, "getParameter": true, "whatsmyuri": true, "connectionStatus": true,
	"hostInfo": true, "getCmdLineOpts": true, "saslStart": true, "saslContinue": true,
	"logout": true, "endSessions": true, "serverStatus": true, "getLog": true,
}

// readOnly lists the commands that read data but never write; every other command takes the
// write lock.
var readOnly = map[string]bool{
	"find": true, "getMore": true, "count": true, "distinct": true, "aggregate": true,
	"listCollections": true, "listIndexes": true, "listDatabases": true, "killCursors": true,
	"dbStats": true, "collStats": true, "explain": true,
}

const (
	opMsg       = 2013
	opQuery     = 2004
	moreToCome  = 1 << 1
	maxMsgBytes = 48 * 1000 * 1000
)

// readMessage reads one whole wire-protocol message (the 16-byte header says its length).
func readMessage(r io.Reader) ([]byte, error) {
	var header [4]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, err
	}
	length := int(binary.LittleEndian.Uint32(header[:]))
	if length < 16 || length > maxMsgBytes {
		return nil, fmt.Errorf("bad message length %d", length)
	}
	msg := make([]byte, length)
	copy(msg, header[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}

func opCode(msg []byte) uint32 { return binary.LittleEndian.Uint32(msg[12:16]) }

func msgFlags(msg []byte) uint32 {
	if opCode(msg) != opMsg || len(msg) < 20 {
		return 0
	}
	return binary.LittleEndian.Uint32(msg[16:20])
}

// commandName is the first key of the command document (OP_MSG section kind 0, or OP_QUERY).
func commandName(msg []byte) string {
	var doc []byte
	switch opCode(msg) {
	case opMsg:
		if len(msg) < 21 || msg[20] != 0 {
			return ""
		}
		doc = msg[21:]
	case opQuery:
		// flags(4) fullCollectionName(cstring) skip(4) return(4) query(document)
		i := 20
		for i < len(msg) && msg[i] != 0 {
			i++
		}
		i += 1 + 8
		if i >= len(msg) {
			return ""
		}
		doc = msg[i:]
	default:
		return ""
	}
	// document: int32 length, then elements: type byte, cstring name, value
	if len(doc) < 6 {
		return ""
	}
	name := doc[5:]
	for j, b := range name {
		if b == 0 {
			return string(name[:j])
		}
	}
	return ""
}

// front accepts clients on ln and forwards each to FerretDB on the unix socket.
func front(ln net.Listener, socket string, logger *slog.Logger) {
	var lock sync.RWMutex
	for {
		client, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				logger.Error("accept", "error", err)
			}
			return
		}
		go func() {
			defer client.Close()
			upstream, err := net.Dial("unix", socket)
			if err != nil {
				logger.Error("dial ferretdb", "error", err)
				return
			}
			defer upstream.Close()
			if err := relay(client, upstream, &lock); err != nil && !errors.Is(err, io.EOF) {
				logger.Debug("connection closed", "error", err)
			}
		}()
	}
}

// relay passes requests and replies through, one request at a time per connection (as the
// driver sends them), holding the shared lock from forwarding a request until its reply is back.
func relay(client, upstream net.Conn, lock *sync.RWMutex) error {
	for {
		req, err := readMessage(client)
		if err != nil {
			return err
		}
		command := commandName(req)
		free := unlocked[command]
		write := !free && !readOnly[command]
		switch {
		case free:
		case write:
			lock.Lock()
		default:
			lock.RLock()
		}
		err = func() error {
			if _, err := upstream.Write(req); err != nil {
				return err
			}
			if msgFlags(req)&moreToCome != 0 {
				return nil // the client expects no reply
			}
			for {
				reply, err := readMessage(upstream)
				if err != nil {
					return err
				}
				if _, err := client.Write(reply); err != nil {
					return err
				}
				if msgFlags(reply)&moreToCome == 0 {
					return nil
				}
			}
		}()
		switch {
		case free:
		case write:
			lock.Unlock()
		default:
			lock.RUnlock()
		}
		if err != nil {
			return err
		}
	}
}
