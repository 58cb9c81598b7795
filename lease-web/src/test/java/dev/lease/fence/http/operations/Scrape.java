package dev.lease.fence.http.operations;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One scrape of a Prometheus endpoint, in the text exposition format: its samples, with the series names and label
 * names they use.
 */
record Scrape(List<Sample> samples) {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)( \\d+)?$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** One sample: a series name, its labels and its value. */
    record Sample(String name, Map<String, String> labels, double value) {
    }

    static Scrape of(String port) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + port + "/actuator/prometheus")).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("GET /actuator/prometheus answered " + response.statusCode());
        }
        return parse(response.body());
    }

    static Scrape parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher sample = LINE.matcher(line.strip());
            if (!sample.matches()) {
                throw new IllegalArgumentException("not a sample line: " + line);
            }
            Map<String, String> labels = new TreeMap<>();
            if (sample.group(3) != null) {
                Matcher label = LABEL.matcher(sample.group(3));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
            }
            samples.add(new Sample(sample.group(1), Collections.unmodifiableMap(labels),
                    Double.parseDouble(sample.group(4))));
        }
        return new Scrape(List.copyOf(samples));
    }

    /** The series names whose samples exist, with the label names each carries. */
    Map<String, Set<String>> series() {
        Map<String, Set<String>> series = new TreeMap<>();
        for (Sample sample : samples) {
            series.computeIfAbsent(sample.name(), name -> new TreeSet<>()).addAll(sample.labels().keySet());
        }
        return series;
    }

    /** The sum of the values of the samples of {@code name} whose labels include {@code labels}. */
    double sum(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name))
                .filter(s -> s.labels().entrySet().containsAll(labels.entrySet()))
                .mapToDouble(Sample::value).sum();
    }
}
