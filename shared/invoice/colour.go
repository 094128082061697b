package invoice

import (
	"fmt"
	"math"
)

// DefaultColour is the accent used when a view's colour is not "#RRGGBB".
const DefaultColour = "#1F4E79"

// rgb is a colour as its three 8-bit channels.
type rgb struct{ r, g, b uint8 }

// accent is an invoice's accent colour and the text colour drawn over it.
type accent struct {
	fill, text rgb
}

// accentOf validates colour strictly as "#RRGGBB" (anything else, even
// "#FFF" or a CSS name, falls back to DefaultColour, so nothing but six hex
// digits ever reaches a stylesheet) and picks black or white text, whichever
// contrasts more with it: the better of the two is always above 4.5:1.
func accentOf(colour string) accent {
	fill, ok := parseHexColour(colour)
	if !ok {
		fill, _ = parseHexColour(DefaultColour)
	}
	black, white := rgb{0, 0, 0}, rgb{255, 255, 255}
	text := white
	if contrastRatio(fill, black) > contrastRatio(fill, white) {
		text = black
	}
	return accent{fill: fill, text: text}
}

// parseHexColour reads "#RRGGBB" (either case) and nothing else.
func parseHexColour(s string) (rgb, bool) {
	if len(s) != 7 || s[0] != '#' {
		return rgb{}, false
	}
	var ch [3]uint8
	for i := range ch {
		hi, okHi := hexDigit(s[1+2*i])
		lo, okLo := hexDigit(s[2+2*i])
		if !okHi || !okLo {
			return rgb{}, false
		}
		ch[i] = hi<<4 | lo
	}
	return rgb{ch[0], ch[1], ch[2]}, true
}

func hexDigit(c byte) (uint8, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hex writes the colour as "#rrggbb".
func (c rgb) hex() string { return fmt.Sprintf("#%02x%02x%02x", c.r, c.g, c.b) }

// relativeLuminance is WCAG 2's relative luminance of an sRGB colour.
func relativeLuminance(c rgb) float64 {
	channel := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*channel(c.r) + 0.7152*channel(c.g) + 0.0722*channel(c.b)
}

// contrastRatio is WCAG 2's contrast ratio between two colours, from 1 to 21.
func contrastRatio(a, b rgb) float64 {
	la, lb := relativeLuminance(a), relativeLuminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
