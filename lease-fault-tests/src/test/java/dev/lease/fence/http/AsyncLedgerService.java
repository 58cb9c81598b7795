package dev.lease.fence.http;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.lease.fence.Fence;
import dev.lease.testing.TestTiming;

/**
 * The service of the fault suite's asynchronous-handler row: a real Boot application on Tomcat whose fenced,
 * {@code @Transactional} handler returns a {@link Callable} (the audit's hole), beside a synchronous fenced handler,
 * both writing a ledger table on the scenario's database with the auto-configured {@code JdbcFence}. Started for real
 * it must fail; started as the mutant (the refusal of asynchronous handlers removed) the callable's write runs after
 * its transaction committed, when {@link #gate} opens.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(AsyncLedgerService.Writes.class)
public class AsyncLedgerService {

    /** Holds the callable's write back until the test opens it, after a newer token's write. */
    public static volatile CountDownLatch gate = new CountDownLatch(0);

    /**
     * Starts one on {@code jdbcUrl}.
     *
     * @param mutant whether the post-processor runs without its refusal of asynchronous handlers
     * @return the running service
     */
    public static ConfigurableApplicationContext start(String jdbcUrl, boolean mutant) {
        SpringApplicationBuilder builder = new SpringApplicationBuilder(AsyncLedgerService.class).logStartupInfo(false)
                .properties(Map.of("server.port", "0", "spring.main.banner-mode", "off", "lease.backend", "in-memory",
                        "spring.datasource.url", jdbcUrl, "lease.fence.initialize-schema", "always"));
        if (mutant) {
            builder.initializers(context -> context.addBeanFactoryPostProcessor(beans -> {
                BeanDefinitionRegistry registry = (BeanDefinitionRegistry) beans;
                String name = "leaseFencedRequestPostProcessor";
                registry.removeBeanDefinition(name);
                registry.registerBeanDefinition(name, new RootBeanDefinition(FencedRequestPostProcessor.class,
                        () -> new FencedRequestPostProcessor(beans.getBeanProvider(Fence.class),
                                new FencedRequestMethods(false))));
            }));
        }
        return builder.run();
    }

    @RestController
    static class Writes {

        private final JdbcTemplate jdbc;

        Writes(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
            jdbc.execute("CREATE TABLE IF NOT EXISTS async_ledger (id BIGSERIAL PRIMARY KEY, resource VARCHAR(200), "
                    + "token BIGINT)");
        }

        /** The hole: the fence moves and commits here; the write runs later, on Spring MVC's executor. */
        @PostMapping("/async/{resource}")
        @Transactional
        @FencedRequest(resource = "#{#resource}")
        public Callable<String> later(@PathVariable String resource, HttpServletRequest request) {
            long token = FencingTokenHeader.parse(request.getHeader(FencingTokenHeader.NAME)).value();
            return () -> {
                if (!gate.await(TestTiming.seconds(60).toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("the test never opened the gate");
                }
                jdbc.update("INSERT INTO async_ledger (resource, token) VALUES (?, ?)", resource, token);
                return "written";
            };
        }

        @PostMapping("/now/{resource}")
        @Transactional
        @FencedRequest(resource = "#{#resource}")
        public String now(@PathVariable String resource, HttpServletRequest request) {
            long token = FencingTokenHeader.parse(request.getHeader(FencingTokenHeader.NAME)).value();
            jdbc.update("INSERT INTO async_ledger (resource, token) VALUES (?, ?)", resource, token);
            return "written";
        }
    }
}
