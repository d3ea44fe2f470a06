package chat

import (
	"strconv"
	"strings"
	"time"
)

// strftime formats t like Python's time.strftime in the C locale, for the
// directives chat templates use: %Y %y %m %d %e %j %H %I %M %S %p %a %A %b
// %B %Z %z and %%. Any other directive is written as it stands, as glibc
// does.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	pad := func(n, width int) {
		s := strconv.Itoa(n)
		for i := len(s); i < width; i++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'Y':
			pad(t.Year(), 4)
		case 'y':
			pad(t.Year()%100, 2)
		case 'm':
			pad(int(t.Month()), 2)
		case 'd':
			pad(t.Day(), 2)
		case 'e':
			if t.Day() < 10 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(t.Day()))
		case 'j':
			pad(t.YearDay(), 3)
		case 'H':
			pad(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			pad(h, 2)
		case 'M':
			pad(t.Minute(), 2)
		case 'S':
			pad(t.Second(), 2)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
