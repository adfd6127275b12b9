package main

// pgcount.go: a PostgreSQL wire-protocol proxy that counts the statements the
// server sends. The server exposes no statement counter and the database has
// no pg_stat_statements (it needs shared_preload_libraries and a restart), so
// the benchmark puts this proxy between a second `boxoffice serve` and
// PostgreSQL and reads the frontend messages: every simple Query ('Q') and
// every Execute ('E', extended protocol) is one statement; the Parse ('P') of
// a named statement is a prepare round trip (pgx prepares a text before its
// first execution and caches it). An unnamed Parse travels with its Bind and
// Execute in one round trip, so it is not counted. Statement texts come from
// the Query message, or from Parse → Bind → Execute per connection, so the
// proxy can tell the server's own statements from River's job polling and
// pool health-check pings.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
)

// stmtKind is how the proxy saw a statement.
type stmtKind int

const (
	kindExec  stmtKind = iota // an executed statement (Execute or simple Query)
	kindParse                 // a Parse (prepare) message
)

// seenStmt is one statement of the server's own (not River's, not a ping).
type seenStmt struct {
	kind stmtKind
	text string // normalised: literals replaced, whitespace collapsed
}

// pgCounter is a TCP proxy to PostgreSQL that records the server's statements.
type pgCounter struct {
	ln     net.Listener
	target string

	mu        sync.Mutex
	log       []seenStmt
	jobs      int // statements of River (job queue) and the notifier
	pings     int // pool health checks
	conns     []net.Conn
	closeOnce sync.Once
}

// startPGCounter listens on 127.0.0.1 and forwards every connection to target (host:port).
func startPGCounter(target string) (*pgCounter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &pgCounter{ln: ln, target: target}
	go c.accept()
	return c, nil
}

// Addr is the proxy's host:port.
func (c *pgCounter) Addr() string { return c.ln.Addr().String() }

// Close stops listening and cuts every proxied connection.
func (c *pgCounter) Close() {
	c.closeOnce.Do(func() {
		c.ln.Close()
		c.mu.Lock()
		for _, conn := range c.conns {
			conn.Close()
		}
		c.mu.Unlock()
	})
}

// Mark returns a position in the statement log.
func (c *pgCounter) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.log)
}

// Since returns the server's statements recorded after mark.
func (c *pgCounter) Since(mark int) []seenStmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]seenStmt(nil), c.log[mark:]...)
}

// Background returns how many River statements and pings were filtered out.
func (c *pgCounter) Background() (jobs, pings int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.jobs, c.pings
}

func (c *pgCounter) accept() {
	for {
		front, err := c.ln.Accept()
		if err != nil {
			return
		}
		back, err := net.Dial("tcp", c.target)
		if err != nil {
			front.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, front, back)
		c.mu.Unlock()
		go func() {
			_, _ = io.Copy(front, back)
			front.Close()
		}()
		go func() {
			_ = c.forward(front, back)
			back.Close()
		}()
	}
}

// SSLRequest and GSSENCRequest codes of a startup packet.
const (
	sslRequestCode   = 80877103
	gssencRequstCode = 80877104
)

// forward copies frontend messages to the backend, reading each one.
func (c *pgCounter) forward(front, back net.Conn) error {
	r := bufio.NewReaderSize(front, 64<<10)
	w := bufio.NewWriterSize(back, 64<<10)
	flush := func() error {
		if r.Buffered() == 0 {
			return w.Flush()
		}
		return nil
	}
	// Startup packets have no type byte; SSL/GSS requests are followed by
	// another startup packet once the backend has answered with one byte.
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		if n < 8 || n > 1<<20 {
			return errors.New("pgcount: bad startup packet")
		}
		rest := make([]byte, n-8)
		if _, err := io.ReadFull(r, rest); err != nil {
			return err
		}
		w.Write(hdr[:])
		w.Write(rest)
		if err := w.Flush(); err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(hdr[4:])
		if code != sslRequestCode && code != gssencRequstCode {
			break
		}
	}
	stmts := map[string]string{}   // prepared statement name → text
	portals := map[string]string{} // portal name → text
	buf := make([]byte, 0, 4096)
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[1:]))
		if n < 4 {
			return errors.New("pgcount: bad message length")
		}
		if cap(buf) < n-4 {
			buf = make([]byte, n-4)
		}
		body := buf[:n-4]
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		switch hdr[0] {
		case 'Q': // simple query: text\0
			c.record(kindExec, cstring(body, 0))
		case 'P': // parse: name\0 text\0 ...
			name := cstring(body, 0)
			text := cstring(body, len(name)+1)
			stmts[name] = text
			if name != "" {
				c.record(kindParse, text)
			}
		case 'B': // bind: portal\0 statement\0 ...
			portal := cstring(body, 0)
			stmt := cstring(body, len(portal)+1)
			portals[portal] = stmts[stmt]
		case 'E': // execute: portal\0 maxrows
			c.record(kindExec, portals[cstring(body, 0)])
		case 'C': // close: 'S'|'P' name\0
			if len(body) > 1 {
				if body[0] == 'S' {
					delete(stmts, cstring(body, 1))
				} else {
					delete(portals, cstring(body, 1))
				}
			}
		}
		w.Write(hdr[:])
		w.Write(body)
		if err := flush(); err != nil {
			return err
		}
	}
}

// cstring reads a NUL-terminated string at off.
func cstring(b []byte, off int) string {
	if off >= len(b) {
		return ""
	}
	i := off
	for i < len(b) && b[i] != 0 {
		i++
	}
	return string(b[off:i])
}

func (c *pgCounter) record(kind stmtKind, text string) {
	lower := strings.ToLower(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case strings.HasPrefix(strings.TrimSpace(lower), "-- ping"), strings.TrimSpace(lower) == ";", lower == "":
		if kind == kindExec {
			c.pings++
		}
	case strings.Contains(lower, "river_"), strings.Contains(lower, "pg_notify"),
		strings.HasPrefix(lower, "listen "), strings.HasPrefix(lower, "unlisten "):
		if kind == kindExec {
			c.jobs++
		}
	default:
		c.log = append(c.log, seenStmt{kind: kind, text: normalizeSQL(text)})
	}
}

var (
	reSQLString = regexp.MustCompile(`'(?:[^']|'')*'`)
	reSQLNumber = regexp.MustCompile(`\b\d+(?:\.\d+)?\b`)
	reSQLList   = regexp.MustCompile(`\?(?:\s*,\s*\?)+`)
	reSpace     = regexp.MustCompile(`\s+`)
)

// normalizeSQL groups statements that differ only in literals.
func normalizeSQL(s string) string {
	s = reSQLString.ReplaceAllString(s, "?")
	s = reSQLNumber.ReplaceAllString(s, "?")
	s = reSQLList.ReplaceAllString(s, "?…")
	s = reSpace.ReplaceAllString(strings.TrimSpace(s), " ")
	return s
}

// stmtSummary is one request's statements: executed, parsed, and the texts.
type stmtSummary struct {
	exec, parse int
	texts       []string
}

func summarize(ss []seenStmt) stmtSummary {
	var s stmtSummary
	for _, st := range ss {
		if st.kind == kindParse {
			s.parse++
			continue
		}
		s.exec++
		s.texts = append(s.texts, st.text)
	}
	return s
}

func (s stmtSummary) String() string { return fmt.Sprintf("%d (%d prepares)", s.exec, s.parse) }
