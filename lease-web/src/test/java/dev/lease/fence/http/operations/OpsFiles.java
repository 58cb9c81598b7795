package dev.lease.fence.http.operations;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the shipped operations files ask of the series an application exports: the lease series names they name and,
 * for each, the label names their selectors and aggregations use. Read from the PromQL expressions as text: a
 * series is a {@code lease_...} word; its labels are those of its {@code {...}} selector and of the
 * {@code by (...)}/{@code without (...)} of the expression it stands in.
 */
final class OpsFiles {

    /** The checkout's root, from this module's directory (Surefire runs tests there). */
    static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    private static final Pattern SERIES = Pattern.compile("\\b(lease_[a-z0-9_]+)\\b(\\{([^}]*)})?");
    private static final Pattern MATCHER_LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)");
    private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
    /** A Grafana variable's query: the series of its first argument must carry the label of its second. */
    private static final Pattern LABEL_VALUES =
            Pattern.compile("label_values\\((.*),\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)");
    private static final Pattern YAML_EXPR = Pattern.compile("(?m)^\\s*expr:\\s*(.+)$");
    private static final Pattern JSON_EXPR = Pattern.compile("\"(?:expr|query|definition)\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

    private OpsFiles() {
    }

    static String read(String relative) throws IOException {
        return Files.readString(ROOT.resolve(relative));
    }

    /** The PromQL expressions of a rules file ({@code expr:} lines) or of a Grafana dashboard (targets, variables). */
    static Set<String> expressions(String relative) throws IOException {
        String text = read(relative);
        Matcher expr = (relative.endsWith(".json") ? JSON_EXPR : YAML_EXPR).matcher(text);
        Set<String> expressions = new TreeSet<>();
        while (expr.find()) {
            expressions.add(expr.group(1).replace("\\\"", "\"").strip());
        }
        return expressions;
    }

    /** Series name → label names the expressions use with it. */
    static Map<String, Set<String>> used(Set<String> expressions) {
        Map<String, Set<String>> used = new TreeMap<>();
        for (String expressionText : expressions) {
            String expression = expressionText;
            Set<String> grouping = new TreeSet<>();
            Matcher values = LABEL_VALUES.matcher(expression);
            if (values.matches()) {
                grouping.add(values.group(2));
                expression = values.group(1);
            }
            Matcher by = GROUPING.matcher(expression);
            while (by.find()) {
                for (String label : by.group(1).split(",")) {
                    if (!label.isBlank()) {
                        grouping.add(label.strip());
                    }
                }
            }
            // Label names of the groupings are not series: look for series in what is left.
            Matcher series = SERIES.matcher(GROUPING.matcher(expression).replaceAll(" "));
            while (series.find()) {
                Set<String> labels = used.computeIfAbsent(series.group(1), name -> new TreeSet<>());
                labels.addAll(grouping);
                if (series.group(3) != null) {
                    Matcher label = MATCHER_LABEL.matcher(series.group(3));
                    while (label.find()) {
                        labels.add(label.group(1));
                    }
                }
            }
        }
        return used;
    }

    /**
     * Every {@code lease_...} series name a page mentions in code spans: names with a Prometheus suffix, and the
     * leader gauge (the tables {@code lease_fence}, {@code lease_lock} are not series).
     */
    static Set<String> seriesNamedIn(String relative) throws IOException {
        Matcher series = Pattern.compile("`(lease_[a-z0-9_]+_(?:total|count|sum|max|bucket)|lease_leader)\\b")
                .matcher(read(relative));
        Set<String> names = new TreeSet<>();
        while (series.find()) {
            names.add(series.group(1));
        }
        return names;
    }

    /** The meter names of a page's meter table: first cells such as {@code | `lease.acquire` |}. */
    static Set<String> metersTabledIn(String relative) throws IOException {
        Matcher meter = Pattern.compile("(?m)^\\| `(lease\\.[a-z.-]+)` \\|").matcher(read(relative));
        Set<String> names = new TreeSet<>();
        while (meter.find()) {
            names.add(meter.group(1));
        }
        return names;
    }
}
