package invoice

import "unicode"

// A PDF draws a string's glyphs left to right in the order given, so a
// name in Hebrew or Arabic would read backwards. visualOrder puts such text
// in display order with a reduced form of the Unicode bidirectional
// algorithm, enough for names and short notes: a string with any
// right-to-left letter is taken as a right-to-left paragraph, its runs are
// laid out right to left, and runs of Latin letters and digits keep their
// own order inside it. Arabic letters are drawn in their isolated forms
// (the PDF library does no contextual shaping): legible, though not joined.

// isRightToLeft reports whether r is a Hebrew or Arabic letter or mark.
func isRightToLeft(r rune) bool {
	return unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko)
}

// visualOrder returns s in the order its glyphs are drawn left to right.
func visualOrder(s string) string {
	runes := []rune(s)
	rtl := make([]bool, len(runes))
	hasRTL := false
	for i, r := range runes {
		rtl[i] = isRightToLeft(r)
		hasRTL = hasRTL || rtl[i]
	}
	if !hasRTL {
		return s
	}
	// A neutral (space, punctuation) stays inside a left-to-right run only
	// when strong left-to-right characters surround it; otherwise it takes
	// the paragraph's direction.
	isLTR := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	ltr := make([]bool, len(runes))
	for i, r := range runes {
		if rtl[i] {
			continue
		}
		if isLTR(r) {
			ltr[i] = true
			continue
		}
		prev, next := i-1, i+1
		for prev >= 0 && !rtl[prev] && !isLTR(runes[prev]) {
			prev--
		}
		for next < len(runes) && !rtl[next] && !isLTR(runes[next]) {
			next++
		}
		ltr[i] = prev >= 0 && next < len(runes) && !rtl[prev] && !rtl[next]
	}
	// Lay the runs out right to left; a right-to-left run's characters are
	// reversed too, with mirrored brackets.
	out := make([]rune, 0, len(runes))
	for end := len(runes); end > 0; {
		start := end - 1
		for start > 0 && ltr[start-1] == ltr[end-1] {
			start--
		}
		if ltr[end-1] {
			out = append(out, runes[start:end]...)
		} else {
			for i := end - 1; i >= start; i-- {
				out = append(out, mirrored(runes[i]))
			}
		}
		end = start
	}
	return string(out)
}

// mirrored is the glyph a bracket takes in right-to-left text.
func mirrored(r rune) rune {
	switch r {
	case '(':
		return ')'
	case ')':
		return '('
	case '[':
		return ']'
	case ']':
		return '['
	case '<':
		return '>'
	case '>':
		return '<'
	}
	return r
}
