package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// PasswordParams are argon2id's costs. A hash records the costs it was made
// with, so raising them later still verifies older hashes.
type PasswordParams struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over the memory
	Threads uint8
}

// DefaultPasswordParams are OWASP's argon2id minimum (19 MiB, 2 passes, 1
// lane): about 30 ms on one core of a small server, and memory-hard so a
// stolen table is expensive to attack.
var DefaultPasswordParams = PasswordParams{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	saltBytes = 16
	hashBytes = 32
)

// hashSlots bounds concurrent hashing: each one holds Memory KiB, and a
// burst of sign-ins must not take the process's memory with it.
var hashSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// derive runs argon2id in one of the hash slots, or gives up with ctx.
func derive(ctx context.Context, password string, salt []byte, p PasswordParams, n uint32) ([]byte, error) {
	select {
	case hashSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-hashSlots }()
	return argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, n), nil
}

// HashPassword returns the PHC string of password's argon2id hash under p
// (DefaultPasswordParams when p is zero):
// $argon2id$v=19$m=19456,t=2,p=1$SALT$HASH.
func HashPassword(ctx context.Context, password string, p PasswordParams) (string, error) {
	if p == (PasswordParams{}) {
		p = DefaultPasswordParams
	}
	salt := make([]byte, saltBytes)
	_, _ = rand.Read(salt)
	sum, err := derive(ctx, password, salt, p, hashBytes)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// errBadHash is a stored hash this package did not write.
var errBadHash = errors.New("auth: malformed password hash")

// CheckPassword reports whether password matches hash, in time that does
// not depend on where they differ.
func CheckPassword(ctx context.Context, password, hash string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return false, errBadHash
	}
	var p PasswordParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil || p.Time == 0 || p.Threads == 0 || p.Memory > 1<<20 {
		return false, errBadHash
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false, errBadHash
	}
	got, err := derive(ctx, password, salt, p, uint32(len(want)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
