// Package money holds the exact decimal values the API trades in: Amount, a
// decimal(10,2) sum of money, and Quantity, a count of goods with up to three
// decimals. Neither ever passes through float64: both parse from the literal
// text of a JSON string or number and keep it as a shopspring decimal.
package money

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Amount is a non-negative decimal(10,2) sum of money: at most 8 digits before
// the point and 2 after. The zero value is 0.00.
type Amount struct{ d decimal.Decimal }

// Quantity is a non-negative decimal with at most 3 decimals, used for stock
// and sale line quantities. The zero value is 0.
type Quantity struct{ d decimal.Decimal }

// Zero is the amount 0.00.
var Zero = Amount{}

// ErrFormat is wrapped by every parse error, so callers can tell a malformed
// value from other failures.
var ErrFormat = errors.New("money: bad format")

// ParseAmount parses s as an Amount. It accepts "10", "10.5" and "10.50" and
// rejects more than 2 decimals, more than 8 integer digits, a sign, exponents,
// NaN and anything that is not plain decimal text.
func ParseAmount(s string) (Amount, error) {
	d, err := parseDecimal(s, 8, 2)
	if err != nil {
		return Amount{}, err
	}
	return Amount{d}, nil
}

// MustAmount is ParseAmount for constants in tests and examples; it panics on
// a malformed value.
func MustAmount(s string) Amount {
	a, err := ParseAmount(s)
	if err != nil {
		panic(err)
	}
	return a
}

// ParseQuantity parses s as a Quantity: plain decimal text, at most 9 integer
// digits and 3 decimals, never negative.
func ParseQuantity(s string) (Quantity, error) {
	d, err := parseDecimal(s, 9, 3)
	if err != nil {
		return Quantity{}, err
	}
	return Quantity{d}, nil
}

// MustQuantity is ParseQuantity for constants; it panics on a malformed value.
func MustQuantity(s string) Quantity {
	q, err := ParseQuantity(s)
	if err != nil {
		panic(err)
	}
	return q
}

// parseDecimal checks s character by character before handing it to decimal,
// so that exponents, signs, spaces and NaN never reach the parser.
func parseDecimal(s string, intDigits, fracDigits int) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Decimal{}, fmt.Errorf("%w: must be a number such as \"10.00\"", ErrFormat)
	}
	whole, frac, hasPoint := strings.Cut(s, ".")
	if whole == "" || (hasPoint && frac == "") || !digits(whole) || !digits(frac) {
		if strings.HasPrefix(s, "-") {
			return decimal.Decimal{}, fmt.Errorf("%w: must not be negative", ErrFormat)
		}
		return decimal.Decimal{}, fmt.Errorf("%w: must be a plain decimal number such as \"10.00\" (no sign, exponent or spaces)", ErrFormat)
	}
	if len(frac) > fracDigits {
		return decimal.Decimal{}, fmt.Errorf("%w: must have at most %d decimal places", ErrFormat, fracDigits)
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > intDigits {
		return decimal.Decimal{}, fmt.Errorf("%w: must have at most %d digits before the decimal point", ErrFormat, intDigits)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return d, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// literal returns the text of a JSON string or number literal, or an error
// for any other JSON value.
func literal(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	if len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		return string(b), nil
	}
	return "", fmt.Errorf("%w: must be a number or a string such as \"10.00\"", ErrFormat)
}

// String formats a as "10.00".
func (a Amount) String() string { return a.d.StringFixed(2) }

// IsZero reports whether a is 0.00.
func (a Amount) IsZero() bool { return a.d.IsZero() }

// Cmp compares a and b: -1, 0 or +1.
func (a Amount) Cmp(b Amount) int { return a.d.Cmp(b.d) }

// Add returns a+b. The caller checks the result with Valid when it may
// overflow decimal(10,2).
func (a Amount) Add(b Amount) Amount { return Amount{a.d.Add(b.d)} }

// Sub returns a-b; the result may be negative, which Valid reports.
func (a Amount) Sub(b Amount) Amount { return Amount{a.d.Sub(b.d)} }

// Valid reports whether a fits decimal(10,2) and is not negative.
func (a Amount) Valid() bool {
	return !a.d.IsNegative() && a.d.LessThan(decimal.New(1, 8)) && a.d.Equal(a.d.Round(2))
}

// LineTotal returns unit price times quantity, rounded half away from zero to
// cents, as a sale line contributes to its sub-total.
func LineTotal(price Amount, q Quantity) Amount {
	return Amount{price.d.Mul(q.d).Round(2)}
}

// MarshalJSON writes the amount as the string "10.00" (digits and a point
// need no escaping).
func (a Amount) MarshalJSON() ([]byte, error) { return quote(a.String()), nil }

func quote(s string) []byte {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// UnmarshalJSON accepts a JSON string or number literal and applies
// ParseAmount's rules to its text.
func (a *Amount) UnmarshalJSON(b []byte) error {
	s, err := literal(b)
	if err != nil {
		return err
	}
	v, err := ParseAmount(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// String formats q without trailing zeros: "2", "1.5".
func (q Quantity) String() string { return q.d.String() }

// IsZero reports whether q is 0.
func (q Quantity) IsZero() bool { return q.d.IsZero() }

// Cmp compares q and r: -1, 0 or +1.
func (q Quantity) Cmp(r Quantity) int { return q.d.Cmp(r.d) }

// MarshalJSON writes the quantity as a string, as the API description types it.
func (q Quantity) MarshalJSON() ([]byte, error) { return quote(q.String()), nil }

// UnmarshalJSON accepts a JSON string or number literal and applies
// ParseQuantity's rules to its text.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	s, err := literal(b)
	if err != nil {
		return err
	}
	v, err := ParseQuantity(s)
	if err != nil {
		return err
	}
	*q = v
	return nil
}

// maxQuantity is the largest Quantity: 9 integer digits, 3 decimals.
var maxQuantity = decimal.RequireFromString("999999999.999")

// MaxQuantity is the largest stock an item can hold.
func MaxQuantity() Quantity { return Quantity{maxQuantity} }

// Delta is a signed change of stock: positive takes, negative gives back.
type Delta struct{ d decimal.Decimal }

// Delta returns q as a change of stock.
func (q Quantity) Delta() Delta { return Delta(q) }

// Add returns d+e.
func (d Delta) Add(e Delta) Delta { return Delta{d.d.Add(e.d)} }

// Sub returns d-e.
func (d Delta) Sub(e Delta) Delta { return Delta{d.d.Sub(e.d)} }

// IsZero reports whether d is no change.
func (d Delta) IsZero() bool { return d.d.IsZero() }

// IsNegative reports whether d gives stock back.
func (d Delta) IsNegative() bool { return d.d.IsNegative() }

// String formats d as a decimal, "-1.5" for a return of 1.5.
func (d Delta) String() string { return d.d.String() }

// Abs returns the size of d as a quantity, which may exceed MaxQuantity.
func (d Delta) Abs() Delta { return Delta{d.d.Abs()} }

// Headroom returns the largest stock that can take d without leaving the
// range of Quantity: for a give-back (negative d), MaxQuantity - |d|, and
// false when even an empty stock could not take it.
func (d Delta) Headroom() (string, bool) {
	if !d.d.IsNegative() {
		return maxQuantity.String(), true
	}
	h := maxQuantity.Sub(d.d.Abs())
	return h.String(), !h.IsNegative()
}

// Add returns q+r.
func (q Quantity) Add(r Quantity) Quantity { return Quantity{q.d.Add(r.d)} }

// Sub returns q-r and whether it is not negative.
func (q Quantity) Sub(r Quantity) (Quantity, bool) {
	d := q.d.Sub(r.d)
	return Quantity{d}, !d.IsNegative()
}

// Less returns the stock q leaves after d (q-d) and whether it stays within
// a Quantity's range: not below zero, not above MaxQuantity.
func (q Quantity) Less(d Delta) (Quantity, bool) {
	r := q.d.Sub(d.d)
	return Quantity{r}, !r.IsNegative() && r.Cmp(maxQuantity) <= 0
}

// Neg returns -d.
func (d Delta) Neg() Delta { return Delta{d.d.Neg()} }

// ParseDelta parses s as a signed change of quantity, as a stock adjustment
// states it ("-2", "10", "+1.5"): a quantity's digits with an optional sign.
func ParseDelta(s string) (Delta, error) {
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	q, err := ParseQuantity(s)
	if err != nil {
		return Delta{}, err
	}
	if neg {
		return Delta{q.d.Neg()}, nil
	}
	return Delta(q), nil
}

// UnmarshalJSON accepts a JSON string or number literal and applies
// ParseDelta's rules to its text.
func (d *Delta) UnmarshalJSON(b []byte) error {
	s, err := literal(b)
	if err != nil {
		return err
	}
	v, err := ParseDelta(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON writes d as a signed string, "-2" or "10".
func (d Delta) MarshalJSON() ([]byte, error) { return quote(d.String()), nil }

// Cents returns the amount in hundredths: exact, since an Amount has at most
// two decimals and ten digits.
func (a Amount) Cents() int64 { return a.d.Shift(2).IntPart() }

// FormatCents writes a signed sum of cents as the API writes money: "12.50",
// "-3.05". Report figures are sums and differences of amounts, so they may
// pass an Amount's ten digits or go below zero.
func FormatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// Value returns q x a exactly: what q units at a each are worth. Sum such
// values, then round the sum once with CentsOf.
func Value(q Quantity, a Amount) decimal.Decimal { return q.d.Mul(a.d) }

// FormatSum writes an exact sum of money (any size: a stock's worth passes
// what cents in an int64 hold) rounded to cents, half away from zero.
func FormatSum(d decimal.Decimal) string { return d.Round(2).StringFixed(2) }
