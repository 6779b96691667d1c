// Package redact keeps secrets out of what prepl writes: passwords given
// to prepl (Add) are replaced wherever they appear in a log line or an
// error (String, Handler), and the secrets inside account statements
// (CREATE USER ... IDENTIFIED BY 'x', SET PASSWORD = ...) are masked in
// statements shown in logs (SQL).
package redact

import (
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "***"

// MinLen is the shortest secret String replaces: shorter ones would mask
// common letters everywhere and make every line unreadable (and are no
// secret worth the name).
const MinLen = 3

var registry struct {
	sync.RWMutex
	secrets []string // longest first, so a secret inside another is masked whole
	r       *strings.Replacer
}

// Add registers secrets that String masks from now on.
func Add(secrets ...string) {
	registry.Lock()
	defer registry.Unlock()
	changed := false
	for _, s := range secrets {
		if len(s) < MinLen {
			continue
		}
		known := false
		for _, k := range registry.secrets {
			known = known || k == s
		}
		if !known {
			registry.secrets = append(registry.secrets, s)
			changed = true
		}
		// A password may show URL-escaped (in a URL) or SQL-escaped.
		for _, v := range []string{url.QueryEscape(s), url.PathEscape(s), url.UserPassword("", s).String()[1:], strings.ReplaceAll(s, "'", "''")} {
			if v != s && len(v) >= MinLen && !contains(registry.secrets, v) {
				registry.secrets = append(registry.secrets, v)
				changed = true
			}
		}
	}
	if !changed {
		return
	}
	sort.Slice(registry.secrets, func(i, j int) bool { return len(registry.secrets[i]) > len(registry.secrets[j]) })
	pairs := make([]string, 0, 2*len(registry.secrets))
	for _, s := range registry.secrets {
		pairs = append(pairs, s, Mask)
	}
	registry.r = strings.NewReplacer(pairs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String masks every registered secret in s.
func String(s string) string {
	registry.RLock()
	r := registry.r
	registry.RUnlock()
	if r == nil {
		return s
	}
	return r.Replace(s)
}

// URL is raw with the password of its user info masked, for an error
// about a URL that may not even parse. It never returns the password.
func URL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		rest, scheme = raw, ""
	}
	// The user info ends at the last '@' before the path or query: a
	// password may hold '@', '/', '?' or ':'.
	end := len(rest)
	at := strings.LastIndex(rest[:end], "@")
	if at >= 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 {
			rest = rest[:colon+1] + Mask + rest[at:]
		}
	}
	rest = maskQuery(rest)
	if scheme != "" {
		return String(scheme + "://" + rest)
	}
	return String(rest)
}

// maskQuery masks the values of password-like query parameters.
func maskQuery(s string) string {
	base, q, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, hasV := strings.Cut(p, "=")
		lk := strings.ToLower(k)
		if hasV && (strings.Contains(lk, "password") || strings.Contains(lk, "passwd") || lk == "pwd") {
			parts[i] = k + "=" + Mask
		}
	}
	return base + "?" + strings.Join(parts, "&")
}
