package dev.lease.samples.billing.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import org.springframework.context.ConfigurableApplicationContext;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What an operator would have seen of the demo, read over HTTP from each instance's Actuator as a monitoring system
 * would: the {@code lease} health contributor, the {@code leases} endpoint and the lease meters in Prometheus' format.
 */
final class OperationsView {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private OperationsView() {
    }

    static void print(PrintStream out, List<String> problems, ConfigurableApplicationContext... instances)
            throws InterruptedException {
        out.println();
        out.println("What the instances expose (management.endpoints.web.exposure.include: health, leases, prometheus):");
        for (ConfigurableApplicationContext instance : instances) {
            String name = instance.getEnvironment().getProperty("billing.instance");
            String base = "http://localhost:" + instance.getEnvironment().getProperty("local.server.port") + "/actuator";
            try {
                JsonNode lease = JSON.readTree(get(base + "/health")).path("components").path("lease");
                out.println("  " + name + "  GET /actuator/health: lease " + lease.path("status").asString() + " "
                        + lease.path("components"));
                out.println("  " + name + "  GET /actuator/leases: " + get(base + "/leases"));
                List<String> meters = get(base + "/prometheus").lines()
                        .filter(line -> line.startsWith("lease_lost_total") || line.startsWith("lease_acquire_seconds_count"))
                        .toList();
                meters.forEach(line -> out.println("  " + name + "  " + line));
                if ("A".equals(name) && meters.stream().noneMatch(line -> line.startsWith("lease_lost_total")
                        && line.contains("cause=\"backend-reported\"") && !line.endsWith(" 0.0"))) {
                    problems.add("A's lease_lost_total does not count the lease its suspended session lost");
                }
            }
            catch (IOException ex) {
                problems.add("Could not read the Actuator of instance " + name + ": " + ex);
            }
        }
    }

    private static String get(String url) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200 && response.statusCode() != 503) {
            throw new IOException("GET " + url + " answered " + response.statusCode());
        }
        return response.body();
    }
}
