package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// datasource is the dashboard's Prometheus, chosen by the $datasource variable (the stack
// provisions one named Prometheus).
var datasource = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// query is one PromQL target; legend may be empty.
type query struct {
	expr, legend string
}

func target(q query, ref string) *prometheus.DataqueryBuilder {
	b := prometheus.NewDataqueryBuilder().Expr(q.expr).RefId(ref).Datasource(datasource)
	if q.legend != "" {
		b = b.LegendFormat(q.legend)
	}
	return b
}

// series is a time-series panel of one or more queries.
func series(title, desc, unit string, qs ...query) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(desc).Unit(unit).Datasource(datasource).
		Height(8).Span(12).FillOpacity(10).ShowPoints(common.VisibilityModeNever)
	for i, q := range qs {
		p = p.WithTarget(target(q, string(rune('A'+i))))
	}
	return p
}

// single is a stat panel of one query, coloured by thresholds (the first step is the base colour).
func single(title, desc, unit string, q query, steps ...dashboard.Threshold) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(desc).Unit(unit).Datasource(datasource).
		Height(4).Span(6).WithTarget(target(q, "A")).
		ColorMode(common.BigValueColorModeBackground).GraphMode(common.BigValueGraphModeArea).
		Thresholds(dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(steps))
}

func step(v *float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Value: v, Color: color}
}

// datasourceVar lets a user pick the Prometheus data source.
func datasourceVar() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")
}

// instanceVar filters the pods (scrape targets) of job eventlogd.
func instanceVar() *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder("instance").Label("pod").Datasource(datasource).
		Query(dashboard.StringOrMap{String: cog.ToPtr(`label_values(up{job="eventlogd"}, instance)`)}).
		Multi(true).IncludeAll(true).AllValue(".*").Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
}

// promAnnotation is an annotation drawn wherever expr has a sample (a Prometheus annotation query).
func promAnnotation(name, color, expr, title, text string) *dashboard.AnnotationQueryBuilder {
	return dashboard.NewAnnotationQueryBuilder().Name(name).Datasource(datasource).Enable(true).IconColor(color).
		Expr(expr).Step("5s").TitleFormat(title).TextFormat(text)
}
