package dev.lease.fence.http;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import dev.lease.fence.Fence;

/**
 * The fenced service of the tests: a real Boot application on Tomcat (random port), its fence the auto-configured
 * {@code JdbcFence} on H2. Every payment the handler makes is a row; {@link #handlerRuns} counts handler bodies.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({PaymentsApp.Payments.class, PaymentsApp.CatchAll.class, PaymentsApp.FenceMutant.class,
        OwnReactorResources.class})
class PaymentsApp {

    static final AtomicInteger handlerRuns = new AtomicInteger();

    /** Starts one; {@code fenceMutant}: the fence without its comparison (it accepts every token). */
    static ConfigurableApplicationContext start(boolean fenceMutant) {
        return new SpringApplicationBuilder(PaymentsApp.class).logStartupInfo(false)
                .properties(Map.of("server.port", "0", "lease.backend", "jdbc",
                        "spring.datasource.url", "jdbc:h2:mem:payments-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1",
                        "payments.fence-mutant", String.valueOf(fenceMutant),
                        "spring.main.banner-mode", "off"))
                .run();
    }

    static String baseUrl(ConfigurableApplicationContext payments) {
        return "http://127.0.0.1:" + ((WebServerApplicationContext) payments).getWebServer().getPort();
    }

    /** Payments made for an invoice, as {@code token} values in the order they were written. */
    static java.util.List<Long> payments(ConfigurableApplicationContext payments, long invoice) {
        return payments.getBean(JdbcTemplate.class)
                .queryForList("SELECT token FROM payment WHERE invoice = ? ORDER BY id", Long.class, invoice);
    }

    static double rejectedCount(ConfigurableApplicationContext payments) {
        var counter = payments.getBean(MeterRegistry.class).find("lease.fence.rejected").counter();
        return counter == null ? 0 : counter.count();
    }

    /** Requests refused with 428 for {@code reason}, as {@code lease.fence.token-required} counts them. */
    static double tokenRequiredCount(ConfigurableApplicationContext payments, String reason) {
        var counter = payments.getBean(MeterRegistry.class).find("lease.fence.token-required").tag("reason", reason)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @RestController
    static class Payments {

        private final JdbcTemplate jdbc;

        Payments(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
            jdbc.execute("CREATE TABLE IF NOT EXISTS payment (id IDENTITY PRIMARY KEY, invoice BIGINT, token BIGINT)");
        }

        @PostMapping("/payments/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}", lease = "invoice-#{#invoice}")
        public String pay(@PathVariable long invoice, jakarta.servlet.http.HttpServletRequest request) {
            handlerRuns.incrementAndGet();
            jdbc.update("INSERT INTO payment (invoice, token) VALUES (?, ?)", invoice,
                    FencingTokenHeader.parse(request.getHeader(FencingTokenHeader.NAME)).value());
            return "paid " + invoice;
        }

        /** Fails after the fence moved: the move must roll back with the handler's transaction. */
        @PostMapping("/refunds/{invoice}")
        @Transactional
        @FencedRequest(resource = "refund-#{#invoice}")
        public String refund(@PathVariable long invoice) {
            handlerRuns.incrementAndGet();
            throw new IllegalStateException("refunds are closed");
        }

        /** Any lease name: the application keeps each account under one. */
        @PostMapping("/ledger/{account}")
        @Transactional
        @FencedRequest(resource = "ledger-#{#account}")
        public String post(@PathVariable String account) {
            handlerRuns.incrementAndGet();
            return "posted " + account;
        }
    }

    /** An application's catch-all handler must not turn a refusal into another answer. */
    @RestControllerAdvice
    static class CatchAll {

        @ExceptionHandler(RuntimeException.class)
        ResponseEntity<String> any(RuntimeException ex) {
            return ResponseEntity.ok("swallowed " + ex);
        }
    }

    /** The mutant of the server-side check: it moves the fence to any token, never refusing one. */
    @ConditionalOnProperty(name = "payments.fence-mutant", havingValue = "true")
    static class FenceMutant {

        @Bean
        @Primary
        Fence mutantFence(JdbcTemplate jdbc) {
            // An application's own Fence replaces JdbcFence, and with it the creation of JdbcFence's table.
            jdbc.execute("CREATE TABLE IF NOT EXISTS lease_fence (resource VARCHAR(255) PRIMARY KEY, fence BIGINT NOT NULL)");
            return (resource, token) -> jdbc.update("MERGE INTO lease_fence (resource, fence) KEY (resource) VALUES (?, ?)",
                    resource, token.value());
        }
    }
}
