package invoice

import "testing"

func TestAccentOf(t *testing.T) {
	t.Run("TextContrastsEnough", func(t *testing.T) {
		// Every colour on a grid of 16 steps a channel: the text chosen over
		// it meets WCAG AA for normal text.
		for r := 0; r < 256; r += 17 {
			for g := 0; g < 256; g += 17 {
				for b := 0; b < 256; b += 17 {
					fill := rgb{uint8(r), uint8(g), uint8(b)}
					a := accentOf(fill.hex())
					if a.fill != fill {
						t.Fatalf("%s read as %s", fill.hex(), a.fill.hex())
					}
					if ratio := contrastRatio(a.fill, a.text); ratio < 4.5 {
						t.Errorf("%s with text %s: contrast %.2f, want at least 4.5", fill.hex(), a.text.hex(), ratio)
					}
				}
			}
		}
	})
	t.Run("ContrastRatio", func(t *testing.T) {
		for _, tc := range []struct {
			a, b rgb
			want float64
		}{
			{rgb{0, 0, 0}, rgb{255, 255, 255}, 21},
			{rgb{255, 255, 255}, rgb{255, 255, 255}, 1},
			{rgb{0x77, 0x77, 0x77}, rgb{255, 255, 255}, 4.48},
		} {
			if got := contrastRatio(tc.a, tc.b); got < tc.want-0.01 || got > tc.want+0.01 {
				t.Errorf("contrast(%s, %s) = %.3f, want %.2f", tc.a.hex(), tc.b.hex(), got, tc.want)
			}
		}
	})
	t.Run("StrictFormat", func(t *testing.T) {
		for colour, ok := range map[string]bool{
			"#0b7A75": true, "#000000": true, "#FFFFFF": true,
			"": false, "#fff": false, "0B7A75": false, "#0B7A7": false, "#0B7A750": false,
			"#0G7A75": false, " #0B7A75": false, "#0B7A75 ": false, "rgb(1,2,3)": false, "#０B7A75": false,
		} {
			if _, got := parseHexColour(colour); got != ok {
				t.Errorf("parseHexColour(%q) ok = %v, want %v", colour, got, ok)
			}
		}
	})
}
