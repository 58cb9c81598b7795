package dev.lease.autoconfigure.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.lease.testing.EmbeddedRedis;

/**
 * Issue 44: Redlock on three real redis-servers, in an application with spring-boot-starter-data-redis and Actuator
 * and no {@code spring.data.redis.*} connection. Boot's own {@code redis} indicator checks localhost:6379, so
 * {@code /actuator/health} is DOWN while the lease entry is UP: the startup says so once, naming the property, and
 * with {@code management.health.redis.enabled=false} the health is UP.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedlockBootRedisHealthTest {

    private static final String WARNING = "set management.health.redis.enabled=false";
    private static final List<EmbeddedRedis> nodes = new ArrayList<>();

    @BeforeAll
    static void startNodes() throws IOException {
        for (int i = 0; i < 3; i++) {
            nodes.add(EmbeddedRedis.start());
        }
    }

    @AfterAll
    static void stopNodes() throws IOException {
        for (EmbeddedRedis node : nodes) {
            node.close();
        }
    }

    @Test
    void bootsRedisIndicatorIsNamedAtStartupAndItsPropertyMakesTheHealthUp(CapturedOutput output) throws Exception {
        assumeFalse(listening(6379), "a Redis on localhost:6379 would make Boot's indicator UP");
        try (ConfigurableApplicationContext app = start()) {
            JsonNode health = health(app);
            assertThat(health.path("status").asString()).isEqualTo("DOWN");
            assertThat(health.path("components").path("redis").path("status").asString()).isEqualTo("DOWN");
            assertThat(health.path("components").path("lease").path("status").asString()).isEqualTo("UP");
            assertThat(output).contains(WARNING).contains("localhost:6379");
        }
        int warnings = occurrences(output.getOut() + output.getErr());
        try (ConfigurableApplicationContext app = start("--management.health.redis.enabled=false")) {
            JsonNode health = health(app);
            assertThat(health.path("status").asString()).isEqualTo("UP");
            assertThat(health.path("components").has("redis")).isFalse();
        }
        assertThat(occurrences(output.getOut() + output.getErr())).as("no WARN once the indicator is off")
                .isEqualTo(warnings);
    }

    private static ConfigurableApplicationContext start(String... more) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
                "--management.endpoints.web.exposure.include=health",
                "--management.endpoint.health.show-components=always", "--lease.backend=redlock",
                "--lease.redlock.nodes=" + nodes.stream().map(n -> "redis://127.0.0.1:" + n.port())
                        .collect(Collectors.joining(","))));
        args.addAll(List.of(more));
        return new SpringApplicationBuilder(App.class).logStartupInfo(false).run(args.toArray(String[]::new));
    }

    private static JsonNode health(ConfigurableApplicationContext app) throws Exception {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        return JsonMapper.builder().build().readTree(response.body());
    }

    private static int occurrences(String text) {
        return text.split(java.util.regex.Pattern.quote(WARNING), -1).length - 1;
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        }
        catch (IOException ex) {
            return false;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }
}
