package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * Issue 44: a service that only checks tokens takes no leases, so it starts on a real PostgreSQL that has no lease
 * table ({@code lease_lock}) and fences its requests; the same service with one {@code @Leased} method still fails
 * its startup, naming the table and the fix.
 */
class TokenCheckingServiceWithoutLeaseStoreTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    @BeforeAll
    static void createTables() {
        new JdbcTemplate(POSTGRES.get().dataSource()).execute("CREATE TABLE payment (invoice BIGINT, token BIGINT)");
    }

    @Test
    void startsWithoutTheLeaseTableAndFences() throws Exception {
        try (ConfigurableApplicationContext service = start(TokenChecking.class)) {
            String url = "http://127.0.0.1:" + ((WebServerApplicationContext) service).getWebServer().getPort()
                    + "/payments/9";
            assertThat(post(url, "5;lease=\"invoice-9\"")).isEqualTo(200);
            assertThat(post(url, "3;lease=\"invoice-9\"")).as("a stale token").isEqualTo(409);
            assertThat(new JdbcTemplate(POSTGRES.get().dataSource()).queryForList(
                    "SELECT token FROM payment WHERE invoice = 9", Long.class)).containsExactly(5L);
            assertThat(new JdbcTemplate(POSTGRES.get().dataSource()).queryForObject(
                    "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'lease_lock'", Long.class))
                    .as("no lease table was needed, nor created").isZero();
        }
    }

    @Test
    void oneLeasedMethodStillFailsTheStartupNamingTheTable() {
        assertThatThrownBy(() -> start(TakingLeases.class).close())
                .satisfies(failure -> assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("cannot read its table 'lease_lock'")
                        .hasMessageContaining("lease.jdbc.initialize-schema: always"));
    }

    private static ConfigurableApplicationContext start(Class<?> application) {
        return new SpringApplicationBuilder(application).logStartupInfo(false)
                .properties(Map.of("server.port", "0", "spring.main.banner-mode", "off",
                        "spring.datasource.url", POSTGRES.get().jdbcUrl(),
                        "spring.datasource.username", "postgres", "lease.fence.initialize-schema", "always"))
                .run();
    }

    private static int post(String url, String token) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .header(FencingTokenHeader.NAME, token).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(TokenChecking.Payments.class)
    static class TokenChecking {

        @RestController
        static class Payments {

            private final JdbcTemplate jdbc;

            Payments(JdbcTemplate jdbc) {
                this.jdbc = jdbc;
            }

            @PostMapping("/payments/{invoice}")
            @Transactional
            @FencedRequest(resource = "payment-#{#invoice}", lease = "invoice-#{#invoice}")
            public String pay(@PathVariable long invoice, jakarta.servlet.http.HttpServletRequest request) {
                jdbc.update("INSERT INTO payment (invoice, token) VALUES (?, ?)", invoice,
                        FencingTokenHeader.parse(request.getHeader(FencingTokenHeader.NAME)).value());
                return "paid " + invoice;
            }
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({TokenChecking.Payments.class, TakingLeases.Reports.class})
    static class TakingLeases {

        static class Reports {

            @Leased(name = "nightly-report", kind = LeaseKind.CORRECTNESS)
            public void run() {
            }
        }
    }
}
