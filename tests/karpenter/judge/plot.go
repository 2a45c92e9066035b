package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// SVG plots each mode's event-to-NodeClaim latency over the storm: for each second of the storm, the median and
// the slowest latency of the NodeClaims deleted in it, on a shared time axis. A chart this small needs no plotting library.
func SVG(title string, results []StormResult) string {
	const (
		w, h           = 900, 420
		left, right    = 70, 20
		top, bottom    = 40, 60
		plotW, plotH   = w - left - right, h - top - bottom
		legendRowSpace = 18
	)
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"}
	var maxX, maxY float64
	type point struct{ x, med, top float64 }
	series := make([][]point, len(results))
	for i, r := range results {
		bySecond := map[int][]time.Duration{}
		for _, s := range r.Samples {
			bySecond[int(s.Done.Seconds())] = append(bySecond[int(s.Done.Seconds())], s.Latency)
		}
		secs := make([]int, 0, len(bySecond))
		for s := range bySecond {
			secs = append(secs, s)
		}
		slices.Sort(secs)
		for _, s := range secs {
			l := bySecond[s]
			slices.Sort(l)
			p := point{x: float64(s) + 0.5, med: l[len(l)/2].Seconds(), top: l[len(l)-1].Seconds()}
			series[i] = append(series[i], p)
			maxX, maxY = math.Max(maxX, p.x+0.5), math.Max(maxY, p.top)
		}
	}
	maxX, maxY = niceCeil(maxX), niceCeil(maxY)
	x := func(v float64) float64 { return left + v/maxX*plotW }
	y := func(v float64) float64 { return top + plotH - v/maxY*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14">%s</text>`+"\n", left, escape(title))
	for i := 0; i <= 5; i++ {
		vy, vx := maxY*float64(i)/5, maxX*float64(i)/5
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s s</text>`+"\n",
			left, w-right, y(vy), y(vy), left-6, y(vy)+4, trim(vy))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s s</text>`+"\n", x(vx), h-bottom+18, trim(vx))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">NodeClaim deleted, since the storm began</text>`+"\n", left+plotW/2, h-bottom+38)
	fmt.Fprintf(&b, `<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">event to NodeClaim deletion</text>`+"\n", top+plotH/2)
	for i, s := range series {
		c := colors[i%len(colors)]
		var med, slow []string
		for _, p := range s {
			med = append(med, fmt.Sprintf("%.1f,%.1f", x(p.x), y(p.med)))
			slow = append(slow, fmt.Sprintf("%.1f,%.1f", x(p.x), y(p.top)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(med, " "))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1" stroke-dasharray="4 3" points="%s"/>`+"\n", c, strings.Join(slow, " "))
		ly := top + 8 + i*legendRowSpace
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s: median (solid) and slowest (dashed) of each second</text>`+"\n",
			left+12, left+36, ly, ly, c, left+42, ly+4, escape(fmt.Sprintf("%s, %d events", results[i].Mode, results[i].Events)))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trim(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
