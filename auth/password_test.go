package auth

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		hash, err := HashPassword(ctx, "correct horse", PasswordParams{})
		require.NoError(t, err)
		require.Regexp(t, `^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`, hash, "OWASP's minimum by default")
		ok, err := CheckPassword(ctx, "correct horse", hash)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = CheckPassword(ctx, "correct horse ", hash)
		require.NoError(t, err)
		require.False(t, ok)
		again, err := HashPassword(ctx, "correct horse", PasswordParams{})
		require.NoError(t, err)
		require.NotEqual(t, hash, again, "a fresh salt each time")
	})
	t.Run("CostsTravelWithTheHash", func(t *testing.T) {
		hash, err := HashPassword(ctx, "pw", PasswordParams{Memory: 64, Time: 1, Threads: 1})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(hash, "$argon2id$v=19$m=64,t=1,p=1$"))
		ok, err := CheckPassword(ctx, "pw", hash)
		require.NoError(t, err)
		require.True(t, ok)
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		for _, h := range []string{"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdA$aGFzaA",
			"$argon2id$v=18$m=64,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=64,t=0,p=1$c2FsdA$aGFzaA",
			"$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=64,t=1,p=1$!!$aGFzaA"} {
			_, err := CheckPassword(ctx, "pw", h)
			require.ErrorIs(t, err, errBadHash, h)
		}
	})
}
