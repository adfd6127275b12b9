package refunds_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/paystack"
	"github.com/boxoffice/boxoffice/payments/paystacktest"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// The environment of this test binary re-run as the process that dies:
// it sends one refund to the Paystack stand-in and, once Paystack has
// answered, says so on stdout and waits to be killed.
const (
	crashChild    = "REFUNDS_CRASH_CHILD"
	crashDB       = "REFUNDS_CRASH_DATABASE_URL"
	crashRefund   = "REFUNDS_CRASH_REFUND_ID"
	crashPaystack = "REFUNDS_CRASH_PAYSTACK_URL"
)

// answered is Paystack, reporting on stdout each answer it got and then
// holding the caller until the process is killed: the moment between the
// provider's answer and the commit of what it said.
type answered struct{ *paystack.Provider }

func (a answered) Refund(ctx context.Context, r payments.RefundRequest) (*payments.RefundResult, error) {
	_, err := a.Provider.Refund(ctx, r)
	fmt.Printf("answered %v\n", err == nil)
	select {}
}

// runCrashChild is the dying process: Send, as the refund job would.
func runCrashChild() int {
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv(crashDB))
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	p, err := paystack.New(paystack.Config{SecretKey: paystackSecret, BaseURL: os.Getenv(crashPaystack)})
	if err != nil {
		fmt.Println("paystack:", err)
		return 1
	}
	id, _ := strconv.ParseInt(os.Getenv(crashRefund), 10, 64)
	svc := &refunds.Service{DB: db, Payments: answered{p}, Now: time.Now}
	fmt.Println("sent:", svc.Send(ctx, id))
	return 1
}

// TestSendSurvivesKill kills (SIGKILL) a process that sent a live refund
// to Paystack after Paystack answered and before the process recorded the
// answer. The refund's next run, as the job's retry after the restart,
// finds the refund in Paystack's list and settles it: Paystack is asked
// once, on SQLite and PostgreSQL.
func TestSendSurvivesKill(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := storetest.MigratedURL(t, kind)
			db := storetest.OpenURL(t, url)
			ps := paystacktest.New(t, paystackSecret)
			p, err := paystack.New(paystack.Config{SecretKey: paystackSecret, BaseURL: ps.URL})
			require.NoError(t, err)
			b := setup(t, db)
			b.svc.Payments = p
			o := b.paystackOrder(t, ps, p, 2)
			v, _, err := b.refund(o, "crash", nil)
			require.NoError(t, err)
			r := b.stored(t, v.ID)

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashChild+"=1", crashDB+"="+url, crashRefund+"="+strconv.FormatInt(r.ID, 10),
				crashPaystack+"="+ps.URL)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "answered true\n", line, "Paystack took the refund")
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			require.Error(t, cmd.Wait(), "killed")

			dead := b.stored(t, v.ID)
			require.Equal(t, store.RefundPending, dead.Status, "the answer was never recorded")
			require.False(t, dead.SentAt.IsZero(), "the attempt was, before the call")
			require.Nil(t, dead.ProviderRefundID)
			require.Len(t, ps.Refunds(*o.PaymentReference), 1)

			// The job's retry after the restart.
			require.ErrorIs(t, b.svc.Send(ctx, r.ID), refunds.ErrAtProvider, "found in Paystack's list, not asked again")
			require.Len(t, ps.Refunds(*o.PaymentReference), 1)
			ps.ProcessRefunds("processed")
			require.NoError(t, b.svc.Send(ctx, r.ID))
			require.Equal(t, store.RefundSucceeded, b.stored(t, v.ID).Status)
			require.Len(t, ps.Refunds(*o.PaymentReference), 1, "one refund at Paystack for one refund")
			got, err := store.OrderByID(ctx, db, o.ID)
			require.NoError(t, err)
			require.Equal(t, o.TotalAmount, got.RefundedAmount)
		})
	}
}
