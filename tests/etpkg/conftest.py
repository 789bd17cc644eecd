from etpkg_fixtures import toysdk_wheel_for_consumers  # noqa: F401
