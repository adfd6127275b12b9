package checkout

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/nyaruka/phonenumbers"
)

// checkRedirects validates success_url and cancel_url against the app's
// allowlist of redirect hosts (exact host match, case-insensitive).
// Errors: invalid_redirect_url, redirect_allowlist_required,
// redirect_domain_not_allowed.
func (s *Service) checkRedirects(ctx context.Context, c Caller, req *request) error {
	hosts := make([]string, 0, 2)
	for _, f := range []struct{ name, raw string }{{"success_url", req.SuccessURL}, {"cancel_url", req.CancelURL}} {
		u, err := url.Parse(f.raw)
		if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.Opaque != "" || !validPort(u.Port()) {
			e := apperr.New(apperr.InvalidRedirectURL, "%s must be a valid HTTPS URL.", f.name)
			e.Details = apperr.Details{f.name: {"must be an absolute https:// URL"}}
			return e
		}
		hosts = append(hosts, strings.ToLower(u.Hostname()))
	}
	app, err := s.app(ctx, c.AppID)
	if err != nil {
		return err
	}
	if len(app.RedirectDomains) == 0 {
		return apperr.New(apperr.RedirectAllowlistRequired,
			"This app has no allowed redirect domains; add one on the app page before creating checkouts.")
	}
	for i, h := range hosts {
		if !slices.Contains(app.RedirectDomains, h) {
			field := []string{"success_url", "cancel_url"}[i]
			e := apperr.New(apperr.RedirectDomainNotAllowed, "The host %s of %s is not on this app's redirect allowlist.", h, field)
			e.Details = apperr.Details{field: {"host is not on the app's redirect allowlist"}}
			return e
		}
	}
	return nil
}

var emailPattern = regexp.MustCompile(`[^\s@]+@[^\s@]+\.[^\s@]+`)

// checkMetadata enforces the size limits of metadata and the rule that it
// holds no personal data: no email address, and not the customer's own
// name, email or phone.
// Errors: metadata_too_large, validation_failed.
func checkMetadata(req *request) error {
	if req.Metadata == nil {
		return nil
	}
	raw, err := json.Marshal(req.Metadata)
	if err != nil {
		return apperr.Validation(apperr.Details{"metadata": {"must be a JSON object"}})
	}
	if len(req.Metadata) > MaxMetadataKeys || len(raw) > MaxMetadataBytes {
		return apperr.New(apperr.MetadataTooLarge, "metadata may hold at most %d keys and %d bytes of JSON (it has %d keys, %d bytes).",
			MaxMetadataKeys, MaxMetadataBytes, len(req.Metadata), len(raw))
	}
	d := apperr.Details{}
	for key, v := range req.Metadata {
		walkStrings(v, func(s string) {
			if personal(s, req) {
				d.Add("metadata."+key, "must not contain personal data (customer name, email address or phone number)")
			}
		})
	}
	for k := range d {
		d[k] = d[k][:1]
	}
	return apperr.Validation(d)
}

// personal reports whether a metadata value carries personal data.
func personal(s string, req *request) bool {
	low := strings.ToLower(s)
	if emailPattern.MatchString(s) {
		return true
	}
	if len(req.Name) >= 3 && strings.Contains(low, strings.ToLower(req.Name)) {
		return true
	}
	if req.Phone != nil {
		digits := onlyDigits(s)
		national := strconv.FormatUint(req.Phone.GetNationalNumber(), 10)
		if len(national) >= 6 && strings.Contains(digits, national) {
			return true
		}
		if n, err := phonenumbers.Parse(s, "GH"); err == nil && phonenumbers.IsNumberMatchWithNumbers(n, req.Phone) == phonenumbers.EXACT_MATCH {
			return true
		}
	}
	return false
}

func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case map[string]any:
		for _, x := range v {
			walkStrings(x, fn)
		}
	case []any:
		for _, x := range v {
			walkStrings(x, fn)
		}
	case json.Number:
		fn(v.String())
	case fmt.Stringer:
		fn(v.String())
	}
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func sortIDs(ids []int64) { slices.Sort(ids) }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// validPort accepts an absent port or one in 1…65535.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}
