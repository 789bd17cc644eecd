from etpkg_fixtures import package_wheel, toysdk_wheel_for_consumers  # noqa: F401
