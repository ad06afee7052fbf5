package a2a

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Server timeouts. ReadHeaderTimeout is what ends a slowloris: a client dribbling headers is
// cut off when it passes, whatever it sends.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	maxHeaderBytes           = 16 << 10
)

// NewServer returns an *http.Server serving the A2A handler on cfg.Addr with every timeout set.
// The caller runs it (ListenAndServe, or Serve on its own listener) and shuts it down. When the
// address is not loopback it prints a loud warning to cfg.Warn: message/send is keystrokes into
// a real terminal.
func NewServer(cfg Config) (*http.Server, error) {
	h, err := NewHandler(cfg)
	if err != nil {
		return nil, err
	}
	c := h.cfg
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = c.MaxBlockingWait + 30*time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if !IsLoopback(c.Addr) {
		fmt.Fprintf(c.Warn, "!! mosh herd serve is bound to %s, beyond loopback.\n"+
			"!! message/send types into real terminals: anyone who gets a token drives your agents.\n"+
			"!! prefer 127.0.0.1 behind a reverse proxy with TLS, or a tailnet address.\n", c.Addr)
	}
	return &http.Server{
		Addr:              c.Addr,
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}, nil
}

// IsLoopback reports whether a listen address (host:port) binds loopback only. An empty host
// or an unspecified address (0.0.0.0, ::) binds every interface; a hostname other than
// localhost counts as beyond loopback because it may resolve anywhere.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
