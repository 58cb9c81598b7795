package dev.lease.faults.workload;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

import dev.lease.faults.mutants.Mutant;
import dev.lease.fence.Fence;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.http.FencedRequest;
import dev.lease.fence.http.FencingTokenHeader;

/**
 * The HTTP workload of a {@link Ledger}: each write is a call to a ledger service, a real Boot application on Tomcat
 * whose handler is a {@link FencedRequest}, as an application calling another service would make it. The worker's
 * call goes through a Boot-built {@code RestClient}, whose fencing interceptor sends the token of the lease bound to
 * the worker's thread; the service advances its {@code JdbcFence} with that token in the handler's transaction and
 * logs the write in the same one, or answers 409, which the client throws as {@link StaleTokenException}. Under the
 * fence mutant the service's {@link Fence} moves to any token it is shown.
 */
final class HttpLedgerWrites implements Ledger.Writes {

    /** One service per database and mutant, as {@link JpaLedgerWrites} keeps one session factory. */
    private static final Map<String, ConfigurableApplicationContext> SERVICES = new ConcurrentHashMap<>();

    private final RestClient client;
    private final String resource;

    HttpLedgerWrites(String jdbcUrl, String resource) {
        Mutant mutant = Mutant.active();
        ConfigurableApplicationContext service = SERVICES.computeIfAbsent(jdbcUrl + " " + mutant.id,
                key -> LedgerService.start(jdbcUrl, mutant == Mutant.FENCE));
        int port = ((WebServerApplicationContext) service).getWebServer().getPort();
        this.client = service.getBean(RestClient.Builder.class).baseUrl("http://127.0.0.1:" + port).build();
        this.resource = resource;
    }

    @Override
    public boolean write(long token, long writeId) {
        try {
            client.post().uri("/ledger/{resource}/{write}", resource, writeId).retrieve().toBodilessEntity();
            return true;
        }
        catch (StaleTokenException stale) {
            return false;
        }
    }

    /** The ledger service: its fence is the auto-configured {@code JdbcFence} on the scenario's database. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({LedgerService.Writes.class, LedgerService.FenceMutant.class})
    static class LedgerService {

        static ConfigurableApplicationContext start(String jdbcUrl, boolean fenceMutant) {
            return new SpringApplicationBuilder(LedgerService.class).logStartupInfo(false)
                    .properties(Map.of("server.port", "0", "spring.main.banner-mode", "off",
                            "spring.datasource.url", jdbcUrl, "lease.backend", "in-memory",
                            "ledger.fence-mutant", String.valueOf(fenceMutant)))
                    .run();
        }

        @RestController
        static class Writes {

            private final JdbcTemplate jdbc;

            Writes(JdbcTemplate jdbc) {
                this.jdbc = jdbc;
            }

            /** Logs the write with the token the fence was advanced to: the one the request carried. */
            @PostMapping("/ledger/{resource}/{write}")
            @Transactional
            @FencedRequest(resource = "#{#resource}")
            public void write(@PathVariable String resource, @PathVariable long write, HttpServletRequest request) {
                long token = FencingTokenHeader.parse(request.getHeader(FencingTokenHeader.NAME)).value();
                jdbc.update("INSERT INTO fault_ledger (resource, token, write_id) VALUES (?, ?, ?)", resource, token,
                        write);
            }
        }

        /** The fence without its comparison, on the service's side: it moves to every token, as Ledger's BROKEN. */
        @ConditionalOnProperty(name = "ledger.fence-mutant", havingValue = "true")
        static class FenceMutant {

            @Bean
            @Primary
            Fence mutantFence(JdbcTemplate jdbc) {
                return (resource, token) -> Ledger.moveWithoutComparing(jdbc, resource, token);
            }
        }
    }
}
