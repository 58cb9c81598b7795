package dev.lease.fence.http;

import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import dev.lease.testing.TestTiming;

/**
 * The calling service of the tests: a real Boot application holding CORRECTNESS leases on ZooKeeper, calling the
 * payments service through the RestClient, WebClient and RestTemplate that Boot's builders make.
 */
@SpringBootConfiguration
@org.springframework.context.annotation.Import(OwnReactorResources.class)
@EnableAutoConfiguration(excludeName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
class BillingApp {

    /** Short, so that a frozen holder loses its lease soon; scaled, so that a loaded machine still connects in time. */
    static final Duration SESSION = TestTiming.seconds(3);

    static ConfigurableApplicationContext start(String zooKeeper) {
        return new SpringApplicationBuilder(BillingApp.class).web(WebApplicationType.NONE).logStartupInfo(false)
                .properties(Map.of("lease.backend", "zookeeper", "lease.zookeeper.connect-string", zooKeeper,
                        "lease.zookeeper.session-timeout", SESSION.toMillis() + "ms",
                        "lease.default-ttl", SESSION.toMillis() + "ms", "spring.main.banner-mode", "off"))
                .run();
    }

    /** The three clients, each built from the Boot builder bean of the calling application. */
    enum Client {
        REST_CLIENT(app -> app.getBean(RestClient.Builder.class).build()),
        WEB_CLIENT(app -> app.getBean(WebClient.Builder.class).build()),
        REST_TEMPLATE(app -> app.getBean(RestTemplateBuilder.class).build());

        private final Function<ConfigurableApplicationContext, Object> build;

        Client(Function<ConfigurableApplicationContext, Object> build) {
            this.build = build;
        }

        /** POSTs to {@code url} and returns the body; errors are the client's own exceptions. */
        String post(ConfigurableApplicationContext app, String url) {
            return post(build.apply(app), url, null);
        }

        /** With a {@code Fencing-Token} header set by the caller ({@code null}: none). */
        String post(ConfigurableApplicationContext app, String url, String header) {
            return post(build.apply(app), url, header);
        }

        Object client(ConfigurableApplicationContext app) {
            return build.apply(app);
        }

        static String post(Object client, String url, String header) {
            if (client instanceof RestClient rest) {
                return rest.post().uri(url).headers(h -> {
                    if (header != null) {
                        h.set(FencingTokenHeader.NAME, header);
                    }
                }).retrieve().body(String.class);
            }
            if (client instanceof WebClient web) {
                return web.post().uri(url).headers(h -> {
                    if (header != null) {
                        h.set(FencingTokenHeader.NAME, header);
                    }
                }).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30));
            }
            org.springframework.web.client.RestTemplate template = (org.springframework.web.client.RestTemplate) client;
            org.springframework.http.HttpHeaders headers = new org.springframework.http.HttpHeaders();
            if (header != null) {
                headers.set(FencingTokenHeader.NAME, header);
            }
            return template.postForObject(url, new org.springframework.http.HttpEntity<>(headers), String.class);
        }
    }
}
