package dev.lease.fence.http;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.lease.fence.Fence;
import dev.lease.fence.StaleTokenException;

/**
 * A plain Spring MVC service with the lease starter and nothing that brings spring-tx (leases in memory, its own
 * {@link Fence} over a map), run by {@link PlainMvcServiceTest} in a child JVM whose class path lacks spring-tx.
 * Prints {@code STARTED <port> <whether spring-tx is there>} and stops when its standard input closes.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(PlainMvcService.Endpoints.class)
class PlainMvcService {

    public static void main(String[] args) throws Exception {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(PlainMvcService.class)
                .logStartupInfo(false).properties(Map.of("server.port", "0", "spring.main.banner-mode", "off",
                        "lease.backend", "in-memory"))
                .run(args)) {
            int port = ((WebServerApplicationContext) app).getWebServer().getPort();
            boolean tx = ClassUtils.isPresent("org.springframework.transaction.PlatformTransactionManager", null);
            System.out.println("STARTED " + port + " spring-tx=" + tx);
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        }
    }

    /** Highest token per resource, in memory: a Fence that needs no transaction. */
    @Bean
    Fence fence() {
        Map<String, Long> highest = new ConcurrentHashMap<>();
        return (resource, token) -> highest.merge(resource, token.value(), (current, presented) -> {
            if (presented < current) {
                throw new StaleTokenException(resource, token, current);
            }
            return presented;
        });
    }

    @RestController
    static class Endpoints {

        @GetMapping("/hello")
        public String hello() {
            return "hello";
        }

        @PostMapping("/notes/{id}")
        @FencedRequest(resource = "note-#{#id}")
        public String write(@PathVariable long id) {
            return "written " + id;
        }
    }
}
