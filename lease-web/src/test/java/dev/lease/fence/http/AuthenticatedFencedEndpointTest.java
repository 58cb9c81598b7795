package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.security.config.Customizer.withDefaults;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Issue 44: the Fencing-Token header is not authentication. Behind Spring Security (the example of
 * docs/security.md), a caller without credentials is refused with 401 before the fence is touched, so a forged token
 * cannot poison the fence for later holders; an authenticated holder's token passes as usual.
 */
class AuthenticatedFencedEndpointTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void anUnauthenticatedCallerIsRefusedBeforeTheFence() throws Exception {
        try (ConfigurableApplicationContext service = new SpringApplicationBuilder(SecuredPayments.class)
                .logStartupInfo(false).properties(Map.of("server.port", "0", "spring.main.banner-mode", "off",
                        "spring.datasource.url", "jdbc:h2:mem:secured-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1"))
                .run()) {
            String url = "http://127.0.0.1:" + ((WebServerApplicationContext) service).getWebServer().getPort()
                    + "/payments/9";
            JdbcTemplate jdbc = service.getBean(JdbcTemplate.class);

            assertThat(post(url, "100000;lease=\"invoice-9\"", null)).as("a forged token, no credentials")
                    .isEqualTo(401);
            assertThat(fence(jdbc)).as("fence rows after the forged call").isEmpty();

            assertThat(post(url, "5;lease=\"invoice-9\"", "billing:s3cret")).isEqualTo(200);
            assertThat(post(url, "100000;lease=\"invoice-9\"", null)).isEqualTo(401);
            assertThat(post(url, "100000;lease=\"invoice-9\"", "billing:wrong")).isEqualTo(401);
            assertThat(fence(jdbc)).as("the fence holds the authenticated holder's token").containsExactly(5L);
            assertThat(post(url, "6;lease=\"invoice-9\"", "billing:s3cret")).as("the next holder").isEqualTo(200);
        }
    }

    private static java.util.List<Long> fence(JdbcTemplate jdbc) {
        return jdbc.queryForList("SELECT fence FROM lease_fence WHERE resource = 'payment-9'", Long.class);
    }

    private static int post(String url, String token, String credentials) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).header(FencingTokenHeader.NAME, token)
                .POST(HttpRequest.BodyPublishers.noBody());
        if (credentials != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableWebSecurity
    @Import(SecuredPayments.Payments.class)
    static class SecuredPayments {

        /** Every request authenticated (HTTP Basic here; mTLS or a gateway's token elsewhere) before any handler. */
        @Bean
        SecurityFilterChain fencedEndpoints(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
                    .httpBasic(withDefaults()).csrf(csrf -> csrf.disable()).build();
        }

        @Bean
        InMemoryUserDetailsManager callers() {
            return new InMemoryUserDetailsManager(User.withUsername("billing").password("{noop}s3cret")
                    .roles("BILLING").build());
        }

        @RestController
        static class Payments {

            @PostMapping("/payments/{invoice}")
            @Transactional
            @FencedRequest(resource = "payment-#{#invoice}", lease = "invoice-#{#invoice}")
            public String pay(@PathVariable long invoice) {
                return "paid " + invoice;
            }
        }
    }
}
