package dev.lease.fence.jpa.app;

import java.util.HashMap;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The test application: fenced entities, Spring Data repositories, leased methods, on the database it is given. */
@SpringBootApplication
public class FencedApp {

    /** Starts the application on {@code jdbcUrl}, tables created from the entities, with extra properties. */
    public static ConfigurableApplicationContext start(String jdbcUrl, Map<String, String> properties) {
        Map<String, Object> all = new HashMap<>();
        all.put("spring.datasource.url", jdbcUrl);
        all.put("spring.jpa.hibernate.ddl-auto", "update");
        all.put("spring.jpa.open-in-view", "false");
        all.put("lease.backend", "in-memory");
        // Fenced entities keep the fence of deleted rows in lease_fence, on every database.
        all.put("lease.fence.initialize-schema", "always");
        all.put("spring.main.banner-mode", "off");
        all.putAll(properties);
        SpringApplication application = new SpringApplicationBuilder(FencedApp.class)
                .web(WebApplicationType.NONE).properties(all).build();
        return application.run();
    }
}
