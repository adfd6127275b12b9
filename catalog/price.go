package catalog

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/store"
	"golang.org/x/text/currency"
)

// Unlimited is the quantity_available reported for a ticket without a stock
// limit: the largest GraphQL Int, so both APIs print the same number.
const Unlimited = math.MaxInt32

// EffectivePrice is the price actually charged, in minor units: zero for a
// free ticket; else the promotional price when set and lower than the price;
// else the price (a missing price counts as zero). store's free and paid
// listing filters say which tickets are free in SQL; TestEffectivePrice runs
// the same cases through both.
func EffectivePrice(t *store.Ticket) int64 {
	if t.Free || t.Price == nil {
		return 0
	}
	if t.PromotionalPrice != nil && *t.PromotionalPrice < *t.Price {
		return *t.PromotionalPrice
	}
	return *t.Price
}

// IsFree reports whether a ticket costs nothing at checkout.
func IsFree(t *store.Ticket) bool { return EffectivePrice(t) == 0 }

// Available is the live availability: quantity − sold − held, never below
// zero; Unlimited for a ticket without a stock limit; 0 once its date is
// cancelled.
func Available(s store.Stock) int64 {
	if s.Cancelled {
		return 0
	}
	if !s.Quantity.Valid {
		return Unlimited
	}
	return max(left(s), 0)
}

// Fits reports whether n more units fit in stock s: always when it is
// unlimited, else when quantity − sold − held is at least n. A sandbox
// checkout asks it of a cart (n ≥ 1); a catalog import asks it of a new
// quantity (n = 0: it must cover what is sold and held). It is the Go twin
// of the condition store.HoldStock and store.UpdateTicketCatalog write in
// SQL; TestStockRule runs the same cases through both.
func Fits(s store.Stock, n int64) bool {
	return !s.Quantity.Valid || left(s) >= n
}

// left is quantity − sold − held of a limited stock; below zero only for a
// quantity not yet written, such as an import's refused one.
func left(s store.Stock) int64 { return s.Quantity.Int64 - s.Sold - s.Held }

// FormatAmount prints minor units as a decimal string with two fraction
// digits: 15000 → "150.00".
func FormatAmount(minor int64) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	frac := strconv.FormatInt(minor%100, 10)
	if len(frac) == 1 {
		frac = "0" + frac
	}
	return sign + strconv.FormatInt(minor/100, 10) + "." + frac
}

// ErrAmount is returned by ParseAmount for a string that is not a
// non-negative decimal amount with at most two fraction digits.
var ErrAmount = errors.New("must be a non-negative decimal amount with at most two fraction digits, such as \"150.00\"")

// ParseAmount reads a decimal amount ("150", "150.5", "150.00") into minor units.
func ParseAmount(s string) (int64, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || len(whole) > 12 || (hasDot && (frac == "" || len(frac) > 2)) {
		return 0, ErrAmount
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, ErrAmount
		}
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// symbols holds the symbols partners display for the currencies sold here;
// CLDR (and so x/text) knows only the code for several African currencies.
var symbols = map[string]string{
	"GHS": "GH₵", "NGN": "₦", "KES": "KSh", "UGX": "USh", "TZS": "TSh", "ZAR": "R",
	"XOF": "CFA", "XAF": "FCFA", "USD": "$", "EUR": "€", "GBP": "£",
}

// CurrencySymbol returns the display symbol of an ISO 4217 code, or the code.
func CurrencySymbol(code string) string {
	if s, ok := symbols[code]; ok {
		return s
	}
	return code
}

// ValidCurrency reports whether code is an ISO 4217 currency code.
func ValidCurrency(code string) bool {
	if len(code) != 3 || strings.ToUpper(code) != code {
		return false
	}
	_, err := currency.ParseISO(code)
	return err == nil
}
